-- The partner dashboard (ADR 0027): partners, their links, their credentials and the audit log.
-- Numbered 020 to leave room for other branches' migrations before it.

-- One row per registered partner; `settings` holds the contract's dashboard settings (never a
-- secret). `import_digest` is the digest of the registry-file entry last imported into the row:
-- an unchanged entry is not imported again, so dashboard changes survive restarts.
CREATE TABLE partners (
  partner_type  TEXT NOT NULL CHECK (partner_type IN ('hostapp', 'miniapp')),
  partner_id    TEXT NOT NULL,
  settings      JSONB NOT NULL,
  import_digest TEXT,
  created_at    TIMESTAMPTZ NOT NULL,
  updated_at    TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (partner_type, partner_id)
);

-- Which miniapps run in which host apps.
CREATE TABLE partner_links (
  app_id    TEXT NOT NULL,
  client_id TEXT NOT NULL,
  PRIMARY KEY (app_id, client_id)
);

-- Credentials: `verifier` is HMAC-SHA256(pepper, secret), what inbound checks compare;
-- `sealed` is the secret under AES-256-GCM, kept only while the credential is active because
-- the platform presents it on its own calls (E3/E4/E6/E7 Authorization, signatures), and
-- erased on revocation.
CREATE TABLE partner_credentials (
  credential_id UUID PRIMARY KEY,
  partner_type  TEXT NOT NULL,
  partner_id    TEXT NOT NULL,
  kind          TEXT NOT NULL CHECK (kind IN ('secret_key', 'signing_secret')),
  verifier      TEXT NOT NULL,
  sealed        TEXT,
  created_at    TIMESTAMPTZ NOT NULL,
  revoked_at    TIMESTAMPTZ,
  seq           BIGSERIAL NOT NULL
);
CREATE INDEX partner_credentials_partner ON partner_credentials (partner_type, partner_id, seq);

-- Who changed what, when; never a secret.
CREATE TABLE audit_entries (
  seq          BIGSERIAL PRIMARY KEY,
  audit_id     UUID NOT NULL UNIQUE,
  at           TIMESTAMPTZ NOT NULL,
  actor_type   TEXT NOT NULL,
  actor_id     TEXT,
  action       TEXT NOT NULL,
  partner_type TEXT NOT NULL,
  partner_id   TEXT NOT NULL,
  changes      JSONB NOT NULL
);
CREATE INDEX audit_entries_partner ON audit_entries (partner_type, partner_id, seq);
CREATE INDEX deliveries_client ON deliveries (client_id, seq);
CREATE INDEX deliveries_app ON deliveries (app_id, seq);
