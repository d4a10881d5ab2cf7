-- Records partners reconcile and data that ages (ADR 0041).
-- IF NOT EXISTS: on a large database an operator builds these indexes beforehand, CONCURRENTLY
-- (ADR 0041, "Applying the records migrations to a large database").

-- Statements: each closed UTC day's lines, written once under the lock of the one progress row.
CREATE TABLE statement_progress (
  singleton      BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
  -- The last closed day; NULL until the first close.
  closed_through DATE
);
INSERT INTO statement_progress (singleton, closed_through) VALUES (TRUE, NULL);

CREATE TABLE statement_days (
  day        DATE PRIMARY KEY,
  closed_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE statement_lines (
  day                 DATE NOT NULL REFERENCES statement_days (day),
  client_id           TEXT NOT NULL,
  order_payment_id    TEXT NOT NULL,
  app_id              TEXT NOT NULL,
  miniapp_order_id    TEXT,
  amount_text         TEXT NOT NULL,
  currency            TEXT NOT NULL,
  payment_status      TEXT NOT NULL CHECK (payment_status IN ('paid', 'cancelled', 'failed')),
  payment_fail_reason TEXT,
  settled_by          TEXT,
  created_at          TIMESTAMPTZ NOT NULL,
  settled_at          TIMESTAMPTZ NOT NULL,
  adjustment          BOOLEAN NOT NULL,
  PRIMARY KEY (day, client_id, order_payment_id),
  -- A payment is listed once, ever: a closed day's lines never move.
  UNIQUE (client_id, order_payment_id)
);
CREATE INDEX IF NOT EXISTS statement_lines_app ON statement_lines (app_id, day, client_id, order_payment_id);
CREATE INDEX IF NOT EXISTS statement_lines_client ON statement_lines (client_id, day, order_payment_id);

-- Terminal transitions by time: what a day's close reads.
CREATE INDEX IF NOT EXISTS payment_status_history_settled_at ON payment_status_history (at) WHERE to_status <> 'in_process';

-- Retention: the order's personal details go after their period or on erasure; the keyed digest of
-- an erased user stays on their payments so a repeat erasure finds events logged since.
ALTER TABLE order_payments ADD COLUMN personal_redacted_at TIMESTAMPTZ;
ALTER TABLE order_payments ADD COLUMN erased_user_digest TEXT;
CREATE INDEX IF NOT EXISTS order_payments_personal_due ON order_payments (created_at) WHERE personal_redacted_at IS NULL;
CREATE INDEX IF NOT EXISTS order_payments_user ON order_payments (client_id, hostapp_user_id) WHERE hostapp_user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS order_payments_erased_user ON order_payments (client_id, erased_user_digest) WHERE erased_user_digest IS NOT NULL;

-- Whom each logged event names (top-level `hostapp_user_id` and `order_payment_id` of its payload),
-- so an erasure finds them without reading payloads; and when its payload was dropped.
ALTER TABLE event_log ADD COLUMN names_user TEXT;
ALTER TABLE event_log ADD COLUMN names_payment TEXT;
ALTER TABLE event_log ADD COLUMN payload_dropped_at TIMESTAMPTZ;
CREATE INDEX IF NOT EXISTS event_log_payload_due ON event_log (at) WHERE payload_dropped_at IS NULL;
CREATE INDEX IF NOT EXISTS event_log_names_user ON event_log (client_id, names_user) WHERE names_user IS NOT NULL;
CREATE INDEX IF NOT EXISTS event_log_names_payment ON event_log (client_id, names_payment) WHERE names_payment IS NOT NULL;

-- The purge's scans, oldest first.
CREATE INDEX IF NOT EXISTS deliveries_ended ON deliveries (created_at) WHERE status <> 'pending';
CREATE INDEX IF NOT EXISTS reconcile_asks_at ON reconcile_asks (asked_at);
CREATE INDEX IF NOT EXISTS idempotency_keys_reserved ON idempotency_keys (reserved_at);
CREATE INDEX IF NOT EXISTS order_payments_settled_created ON order_payments (created_at) WHERE payment_status <> 'in_process';
