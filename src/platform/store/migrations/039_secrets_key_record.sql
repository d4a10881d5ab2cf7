-- Which MINIBRIDGE_SECRETS_KEY sealed the partner secrets, and the verifier pepper sealed under it
-- (ADR 0038). One row. The pepper outlives a rotation of the key: verifiers (of active and
-- revoked credentials) and import digests stay comparable, where re-deriving it from a new key
-- would forget every revocation. `key_id` names a key without revealing it (HKDF of the key).
CREATE TABLE secrets_key (
  singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
  key_id    TEXT NOT NULL,
  pepper    TEXT NOT NULL,
  sealed_at TIMESTAMPTZ NOT NULL
);
