-- The E6 claim counts each miniapp's live leases (its attempts in flight, ADR 0008). Leases are
-- few at any time (cleared when an attempt is recorded), so a partial index keeps that count
-- cheap however long the backlog of pending deliveries grows.
CREATE INDEX deliveries_leased ON deliveries (app_id, lease_until) WHERE lease_until IS NOT NULL;
