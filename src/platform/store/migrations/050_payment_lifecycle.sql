-- The payment lifecycle (ADR 0039): every order payment has an expiry, and the platform asks
-- the host app itself (E4) about a payment left in_process without an E5.
--   expires_at            when the payment expires (told to the host app on E3)
--   reconcile_next_at     when to ask the host app next; NULL once the platform stopped asking
--   reconcile_asks        how many times it asked
--   reconcile_lease_*     the instance asking now holds the payment until lease_until
--   stuck_since           when an ask at or after expiry still found it in_process (or failed)
ALTER TABLE order_payments ADD COLUMN expires_at TIMESTAMPTZ;
ALTER TABLE order_payments ADD COLUMN reconcile_next_at TIMESTAMPTZ;
ALTER TABLE order_payments ADD COLUMN reconcile_asks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE order_payments ADD COLUMN reconcile_lease_id UUID;
ALTER TABLE order_payments ADD COLUMN reconcile_lease_until TIMESTAMPTZ;
ALTER TABLE order_payments ADD COLUMN stuck_since TIMESTAMPTZ;
-- What set the terminal status (E5, E4 or reconciliation), written with the transition.
ALTER TABLE order_payments ADD COLUMN settled_by TEXT;

-- Payments created before expiry existed: 24 hours (the contract's default lifetime) from their
-- creation, asked about at once. Only payments still in process need it.
UPDATE order_payments SET expires_at = created_at + interval '24 hours', reconcile_next_at = created_at
WHERE payment_status = 'in_process';

-- Due asks, oldest first; a payment leaves the index when it settles.
CREATE INDEX order_payments_reconcile_due ON order_payments (reconcile_next_at)
  WHERE payment_status = 'in_process' AND reconcile_next_at IS NOT NULL;
-- Asks in flight per host app (the claim counts them, as the E6 claim counts leases per miniapp).
CREATE INDEX order_payments_reconcile_leased ON order_payments (client_id, reconcile_lease_until)
  WHERE reconcile_lease_until IS NOT NULL;
-- Stuck payments, for the metric and the dashboard's list.
CREATE INDEX order_payments_stuck ON order_payments (stuck_since)
  WHERE payment_status = 'in_process' AND stuck_since IS NOT NULL;
-- The dashboard's payment lists, newest first, per host app and per miniapp.
CREATE INDEX order_payments_client_created ON order_payments (client_id, created_at DESC, order_payment_id DESC);
CREATE INDEX order_payments_app_created ON order_payments (app_id, created_at DESC, client_id DESC, order_payment_id DESC);
CREATE INDEX order_payments_created ON order_payments (created_at DESC, client_id DESC, order_payment_id DESC);
-- A payment's E6 deliveries, for its timeline.
CREATE INDEX deliveries_payment ON deliveries (client_id, order_payment_id);

-- A status set by the platform's own query (reconciliation) is told apart from one an E2 caused.
-- NOT VALID: every existing row holds one of the old values; no scan of the history.
ALTER TABLE payment_status_history DROP CONSTRAINT payment_status_history_source_check;
ALTER TABLE payment_status_history ADD CONSTRAINT payment_status_history_source_check
  CHECK (source IN ('E1', 'E5', 'E4', 'reconciliation')) NOT VALID;

-- What each of the platform's own status queries found, for the payment's timeline.
CREATE TABLE reconcile_asks (
  id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  client_id        TEXT NOT NULL,
  order_payment_id TEXT NOT NULL,
  asked_at         TIMESTAMPTZ NOT NULL,
  duration_ms      INTEGER NOT NULL CHECK (duration_ms >= 0),
  outcome          TEXT NOT NULL CHECK (outcome IN ('in_process', 'settled', 'unchanged', 'conflict', 'not_found', 'failed')),
  payment_status   TEXT,
  detail           TEXT,
  FOREIGN KEY (client_id, order_payment_id) REFERENCES order_payments (client_id, order_payment_id)
);
CREATE INDEX reconcile_asks_payment ON reconcile_asks (client_id, order_payment_id, id);
