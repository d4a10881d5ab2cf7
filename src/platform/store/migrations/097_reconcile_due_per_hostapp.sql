-- Due asks per host app, oldest first (ADR 0039). The claim takes each host app's oldest due
-- payments up to its free slots by a seek on (client_id, reconcile_next_at), so its cost is the
-- host apps times their slots whatever the backlog. The index it replaces, on reconcile_next_at
-- alone, served a walk of the whole due backlog in time order, which a plan without statistics
-- (PGlite has no autovacuum) made a read of every due payment and a sort, on every claim, and
-- which read past every payment of a host app that was at its cap or paused.
-- New name and IF NOT EXISTS: on a large database an operator builds it beforehand, CONCURRENTLY
-- (ADR 0041, "Applying the records migrations to a large database").
CREATE INDEX IF NOT EXISTS order_payments_reconcile_due_by_hostapp ON order_payments (client_id, reconcile_next_at)
  WHERE payment_status = 'in_process' AND reconcile_next_at IS NOT NULL;
DROP INDEX IF EXISTS order_payments_reconcile_due;
