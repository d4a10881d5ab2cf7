-- The payment listings' indexes become partial on a predicate no key lookup states (ADR 0013). A
-- lookup of one payment by its primary key (client_id, order_payment_id), the foreign-key checks of
-- every history entry, delivery and ask among them, is planned once per connection and the plan
-- kept; planned while order_payments was small, the three indexes replaced here cost the same as
-- the primary key for it and the planner took the last one made, so each check read every index
-- entry of that host app (or miniapp, or all payments): a cost that grew with the payments served.
-- The listing states the predicate; the record purges bound created_at, which implies it.
-- New names and IF NOT EXISTS: on a large database an operator builds them beforehand, CONCURRENTLY
-- (ADR 0041, "Applying the records migrations to a large database").
CREATE INDEX IF NOT EXISTS order_payments_client_listing ON order_payments (client_id, created_at DESC, order_payment_id DESC)
  WHERE created_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS order_payments_app_listing ON order_payments (app_id, created_at DESC, client_id DESC, order_payment_id DESC)
  WHERE created_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS order_payments_listing ON order_payments (created_at DESC, client_id DESC, order_payment_id DESC)
  WHERE created_at IS NOT NULL;
DROP INDEX IF EXISTS order_payments_client_created;
DROP INDEX IF EXISTS order_payments_app_created;
DROP INDEX IF EXISTS order_payments_created;
