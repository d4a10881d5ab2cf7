-- A recorded E6 attempt hands its slot to its miniapp's oldest due delivery (ADR 0033). This
-- index finds it past only that miniapp's few leased rows, however long the other miniapps'
-- backlogs ahead of it are.
CREATE INDEX deliveries_due_by_app ON deliveries (app_id, next_attempt_at) WHERE status = 'pending';
