-- Whom a logged event names (ADR 0041): every host app user id and payment id its payload holds as
-- `hostapp_user_id` and `order_payment_id` members at any depth, in objects and arrays, not only at
-- its top level; an erasure finds them by these lists (GIN) without reading payloads.
-- IF NOT EXISTS: on a large database an operator builds the indexes beforehand, CONCURRENTLY
-- (ADR 0041, "Applying the records migrations to a large database").
ALTER TABLE event_log ADD COLUMN names_users TEXT[];
ALTER TABLE event_log ADD COLUMN names_payments TEXT[];

-- Events logged before, whose payload is still kept, are read once here. Only payloads that
-- mention either member are rewritten; a payload jsonb cannot hold (an escaped NUL) is left as it
-- was recorded, with its top-level names. 255 and 250: the contract's longest host app user id
-- (ErasureRequest) and payment id (OrderPaymentId) when this was written; the bridge reads them
-- from the contract.
UPDATE event_log SET
  names_users = (SELECT array_agg(DISTINCT v #>> '{}') FROM jsonb_path_query(payload::jsonb, 'strict $.**.hostapp_user_id') AS v
    WHERE jsonb_typeof(v) = 'string' AND length(v #>> '{}') BETWEEN 1 AND 255),
  names_payments = (SELECT array_agg(DISTINCT v #>> '{}') FROM jsonb_path_query(payload::jsonb, 'strict $.**.order_payment_id') AS v
    WHERE jsonb_typeof(v) = 'string' AND length(v #>> '{}') BETWEEN 1 AND 250)
WHERE payload IS NOT NULL AND strpos(payload, '\u0000') = 0
  AND (strpos(payload, '"hostapp_user_id"') > 0 OR strpos(payload, '"order_payment_id"') > 0);
UPDATE event_log SET names_users = ARRAY[names_user] WHERE names_users IS NULL AND names_user IS NOT NULL;
UPDATE event_log SET names_payments = ARRAY[names_payment] WHERE names_payments IS NULL AND names_payment IS NOT NULL;

DROP INDEX IF EXISTS event_log_names_user;
DROP INDEX IF EXISTS event_log_names_payment;
ALTER TABLE event_log DROP COLUMN names_user;
ALTER TABLE event_log DROP COLUMN names_payment;
CREATE INDEX IF NOT EXISTS event_log_names_users ON event_log USING gin (names_users) WHERE names_users IS NOT NULL;
CREATE INDEX IF NOT EXISTS event_log_names_payments ON event_log USING gin (names_payments) WHERE names_payments IS NOT NULL;

-- The erasure walks a user's erased payments in key order, in batches.
DROP INDEX IF EXISTS order_payments_erased_user;
CREATE INDEX IF NOT EXISTS order_payments_erased_user_key ON order_payments (client_id, erased_user_digest, order_payment_id)
  WHERE erased_user_digest IS NOT NULL;
