-- The payment listings' indexes become partial on a predicate no key lookup states (ADR 0013). A
-- lookup of one payment by its primary key (client_id, order_payment_id), the foreign-key checks of
-- every history entry, delivery and ask among them, is planned once per connection and the plan
-- kept; planned while order_payments was small, the three indexes below cost the same as the
-- primary key for it and the planner took the last one made, so each check read every index entry
-- of that host app (or miniapp, or all payments): a cost that grew with the payments served. The
-- listings and the record purges state created_at's bounds, or IS NOT NULL, and use them as before.
DROP INDEX IF EXISTS order_payments_client_created;
DROP INDEX IF EXISTS order_payments_app_created;
DROP INDEX IF EXISTS order_payments_created;
CREATE INDEX order_payments_client_created ON order_payments (client_id, created_at DESC, order_payment_id DESC)
  WHERE created_at IS NOT NULL;
CREATE INDEX order_payments_app_created ON order_payments (app_id, created_at DESC, client_id DESC, order_payment_id DESC)
  WHERE created_at IS NOT NULL;
CREATE INDEX order_payments_created ON order_payments (created_at DESC, client_id DESC, order_payment_id DESC)
  WHERE created_at IS NOT NULL;
