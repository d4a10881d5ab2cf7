-- The purge of personal order details (ADR 0041) reads an index of exactly the rows it has yet to
-- redact: settled and not yet redacted. The index of 060 also held payments still in process, so
-- the planner preferred the index of every settled payment and walked, on each batch, over every
-- payment already redacted. A payment leaves this one when it is redacted; a new payment (in
-- process) is not in it, so E1 writes one index entry fewer.
-- IF NOT EXISTS: an operator with a large order_payments builds it beforehand with
-- CREATE INDEX CONCURRENTLY (ADR 0041, "Applying the records migrations to a large database").
CREATE INDEX IF NOT EXISTS order_payments_personal_settled_due ON order_payments (created_at)
  WHERE personal_redacted_at IS NULL AND payment_status <> 'in_process';
DROP INDEX IF EXISTS order_payments_personal_due;
