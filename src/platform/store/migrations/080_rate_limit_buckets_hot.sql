-- A bucket's take updates its `at` on every counted request (ADR 0029). An index on `at` made every
-- such update a new index entry (not a heap-only update), so a lookup of a hot bucket by its key
-- meets a growing list of dead versions wherever vacuum lags or is off (this machine runs without
-- autovacuum): a cost that grows with the requests served. Without it the takes update in place. The idle purge, once every
-- thousand takes, reads the table whole: a row per partner and limiter, and per source of a failed
-- authentication in the last few seconds.
DROP INDEX IF EXISTS rate_limit_buckets_at;
