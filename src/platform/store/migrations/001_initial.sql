-- Order payments (D6). The host app issues order_payment_id (E3), so it is unique per host app.
CREATE TABLE order_payments (
  client_id           TEXT NOT NULL,
  order_payment_id    TEXT NOT NULL,
  app_id              TEXT NOT NULL,
  miniapp_order_id    TEXT,
  hostapp_user_id     TEXT,
  -- The Decimal exactly as sent (D2); the NUMERIC copy exists for queries and must agree with it.
  amount_text         TEXT NOT NULL,
  amount              NUMERIC(22, 2) NOT NULL,
  currency            TEXT NOT NULL,
  -- JSON kept as text so numbers keep their exact digits.
  order_json          TEXT NOT NULL,
  payment_status      TEXT NOT NULL CHECK (payment_status IN ('in_process', 'paid', 'cancelled', 'failed')),
  payment_fail_reason TEXT,
  custom_attributes   TEXT,
  created_at          TIMESTAMPTZ NOT NULL,
  updated_at          TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (client_id, order_payment_id),
  CHECK (amount = amount_text::NUMERIC)
);

CREATE TABLE payment_status_history (
  id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  client_id        TEXT NOT NULL,
  order_payment_id TEXT NOT NULL,
  from_status      TEXT,
  to_status        TEXT NOT NULL,
  source           TEXT NOT NULL CHECK (source IN ('E1', 'E5', 'E4')),
  reason           TEXT,
  at               TIMESTAMPTZ NOT NULL,
  FOREIGN KEY (client_id, order_payment_id) REFERENCES order_payments (client_id, order_payment_id)
);
CREATE INDEX payment_status_history_order ON payment_status_history (client_id, order_payment_id, id);

-- E1 idempotency keys (D7). A pending key is a reservation held while E3 runs.
CREATE TABLE idempotency_keys (
  key               TEXT PRIMARY KEY,
  request_hash      TEXT NOT NULL,
  state             TEXT NOT NULL CHECK (state IN ('pending', 'done')),
  reservation_id    UUID NOT NULL,
  order_payment_id  TEXT,
  reserved_at       TIMESTAMPTZ NOT NULL,
  expires_at        TIMESTAMPTZ,
  CHECK ((state = 'done') = (order_payment_id IS NOT NULL))
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at) WHERE expires_at IS NOT NULL;

-- E6 outbox (D8).
CREATE TABLE deliveries (
  delivery_id         UUID PRIMARY KEY,
  -- Insertion order: the keyset for newest-first pages, independent of clock values.
  seq                 BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  event_id            TEXT NOT NULL UNIQUE,
  client_id           TEXT NOT NULL,
  order_payment_id    TEXT NOT NULL,
  app_id              TEXT NOT NULL,
  payment_status      TEXT NOT NULL,
  body                TEXT NOT NULL,
  status              TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
  attempts_made       INTEGER NOT NULL DEFAULT 0,
  next_attempt_at     TIMESTAMPTZ,
  lease_id            UUID,
  lease_until         TIMESTAMPTZ,
  -- Start of the current 72-hour retry schedule: the transition, or the last manual redelivery.
  horizon_started_at  TIMESTAMPTZ NOT NULL,
  created_at          TIMESTAMPTZ NOT NULL,
  delivered_at        TIMESTAMPTZ,
  last_error          TEXT,
  FOREIGN KEY (client_id, order_payment_id) REFERENCES order_payments (client_id, order_payment_id),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_status_seq ON deliveries (status, seq);

CREATE TABLE delivery_attempts (
  delivery_id  UUID NOT NULL REFERENCES deliveries (delivery_id),
  attempt      INTEGER NOT NULL CHECK (attempt >= 1),
  started_at   TIMESTAMPTZ NOT NULL,
  duration_ms  INTEGER NOT NULL CHECK (duration_ms >= 0),
  outcome      TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed')),
  http_status  INTEGER,
  error        TEXT,
  PRIMARY KEY (delivery_id, attempt)
);

-- Event bridge log (D9), append-only. Refused events may lack the fields a valid body has.
CREATE TABLE event_log (
  id                    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id              TEXT NOT NULL,
  direction             TEXT NOT NULL CHECK (direction IN ('hostapp_to_miniapp', 'miniapp_to_hostapp')),
  app_id                TEXT,
  client_id             TEXT,
  event_type            TEXT,
  external_event_id     TEXT,
  payload               TEXT,
  outcome               TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'refused')),
  error_code            TEXT,
  receiver_http_status  INTEGER,
  receiver_response     TEXT,
  duration_ms           INTEGER,
  at                    TIMESTAMPTZ NOT NULL
);
CREATE INDEX event_log_event_id ON event_log (event_id, id);

-- Request signatures seen within the replay window (D4).
CREATE TABLE replay_guard (
  digest      TEXT PRIMARY KEY,
  expires_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX replay_guard_expiry ON replay_guard (expires_at);
