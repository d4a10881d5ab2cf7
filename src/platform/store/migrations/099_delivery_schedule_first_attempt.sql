-- The number of the attempt a delivery's current retry schedule began with (ADR 0038): null for
-- 1, the schedule its transition started; a redelivery sets it to the attempt it queues, so the
-- back-off starts again from its first delay, as a fresh schedule does, instead of from the
-- delay its earlier attempts had reached (an hour). Nullable without a default: adding it
-- rewrites nothing, however many deliveries there are.
ALTER TABLE deliveries ADD COLUMN schedule_first_attempt integer;
