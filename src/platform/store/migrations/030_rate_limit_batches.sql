-- A take may ask for several tokens at once (ADR 0031): the requests of one key that arrive
-- while its previous take is in flight are counted by one statement, which records how many it
-- granted. `allowed` stays, with a default, so an instance still running the one-token statement
-- during a rolling upgrade keeps working on the same rows.
ALTER TABLE rate_limit_buckets ADD COLUMN granted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rate_limit_buckets ALTER COLUMN allowed SET DEFAULT false;
