-- Rate-limit token buckets shared by every platform instance on this database (ADR 0029).
-- UNLOGGED: a bucket is a few seconds of state that is cheap to lose (a crash refills every
-- bucket, as a restart of a single instance always did), so it skips the write-ahead log and
-- costs no fsync on the hot path. Each counted request is one atomic upsert of its own row.
CREATE UNLOGGED TABLE rate_limit_buckets (
  key     TEXT PRIMARY KEY,
  tokens  DOUBLE PRECISION NOT NULL,
  at      TIMESTAMPTZ NOT NULL,
  allowed BOOLEAN NOT NULL
);
CREATE INDEX rate_limit_buckets_at ON rate_limit_buckets (at);
