-- No statement reads idempotency_keys by reserved_at any more: the purge takes an Idempotency-Key
-- by its own expiry (idempotency_keys_expiry), a miniapp_order_id key goes with its payment's
-- financial record, and a reservation is found by its key (ADR 0041). The index only cost every
-- E1 an index entry per key it reserved, and its bytes for as long as the key is kept (a
-- miniapp_order_id key: as long as its payment's financial record, five years by default).
DROP INDEX IF EXISTS idempotency_keys_reserved;
