-- An E6 attempt is numbered when it starts, not when its outcome is recorded (ADR 0037): a lease
-- taken counts one attempt, so an attempt whose instance died before recording it keeps its
-- number, and the next lease of that delivery records it as failed ("no outcome recorded") and
-- sends attempt n + 1. NULL (rows from before) means as many as attempts_made: no rewrite of
-- the table. leased_at is when the current (or last) lease was taken.
ALTER TABLE deliveries ADD COLUMN attempts_started INTEGER;
ALTER TABLE deliveries ADD COLUMN leased_at TIMESTAMPTZ;
