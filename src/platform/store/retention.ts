import type { Db, Queryable } from './db.js';
import { idempotencyKeys } from './idempotency.js';
import { REPLAY_PURGE_GRACE_MS } from './replayGuard.js';
import type { Clock } from './time.js';

/** The kinds of record the purge ages out (the contract's `x-retention`, ADR 0041). */
export type PurgeKind =
  'event_payloads' | 'deliveries' | 'reconcile_asks' | 'order_personal_details' | 'replay_guard' | 'idempotency_keys' | 'financial_record';

export interface ErasureCounts {
  payments: number;
  events: number;
}

/**
 * Ageing and erasure of records (ADR 0041). Every purge statement takes at most `limit` rows, with
 * FOR UPDATE SKIP LOCKED: instances purging at once take disjoint batches, and a row E1, E5 or the
 * E6 worker holds is skipped rather than waited for (it is taken by a later batch). Only rows past
 * their period are touched, which no live payment path reads.
 */
export interface Retention {
  /**
   * Deletes or redacts one batch of `kind` past its period (`periodMs` before the store's clock;
   * for Idempotency-Keys, whose period is set as their expiry when written, past that expiry).
   * Returns how many rows it changed.
   */
  purge(kind: PurgeKind, periodMs: number, limit: number): Promise<number>;
  /**
   * Erases one host app user's personal data: the user id and personal order details of their
   * payments (marked with `userDigest`, so a repeat finds events logged since), and the payload and
   * receiver answer of every logged event naming the user or one of those payments.
   */
  eraseUser(
    clientId: string,
    hostappUserId: string,
    userDigest: string,
    within?: (tx: Queryable, counts: ErasureCounts) => Promise<void>,
  ): Promise<ErasureCounts>;
}

/** An order's JSON text reduced to its financial members (jsonb keeps every digit of a number). */
const redactedOrder = (column: string) =>
  `(SELECT COALESCE(jsonb_object_agg(key, value), '{}'::jsonb)::text FROM jsonb_each(${column}::jsonb) WHERE key = ANY($3::text[]))`;

const purgeStatements: Record<PurgeKind, string> = {
  event_payloads: `WITH batch AS (
      SELECT id FROM event_log WHERE payload_dropped_at IS NULL AND at < $1 ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)
    UPDATE event_log e SET payload = NULL, receiver_response = NULL, names_user = NULL, payload_dropped_at = $3
    FROM batch WHERE e.id = batch.id`,
  deliveries: `WITH batch AS (
      SELECT delivery_id FROM deliveries WHERE status <> 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2
      FOR UPDATE SKIP LOCKED),
    attempts AS (DELETE FROM delivery_attempts a USING batch WHERE a.delivery_id = batch.delivery_id)
    DELETE FROM deliveries d USING batch WHERE d.delivery_id = batch.delivery_id`,
  reconcile_asks: `WITH batch AS (
      SELECT id FROM reconcile_asks WHERE asked_at < $1 ORDER BY asked_at LIMIT $2 FOR UPDATE SKIP LOCKED)
    DELETE FROM reconcile_asks r USING batch WHERE r.id = batch.id`,
  // Settled payments only: one still in process is still asked about (E4 sends its user id).
  order_personal_details: `WITH batch AS (
      SELECT client_id, order_payment_id FROM order_payments
      WHERE personal_redacted_at IS NULL AND created_at < $1 AND payment_status <> 'in_process'
      ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
    UPDATE order_payments p SET order_json = ${redactedOrder('p.order_json')}, custom_attributes = NULL, hostapp_user_id = NULL,
      personal_redacted_at = $4
    FROM batch WHERE p.client_id = batch.client_id AND p.order_payment_id = batch.order_payment_id`,
  replay_guard: `WITH batch AS (
      SELECT digest FROM replay_guard WHERE expires_at < $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
    DELETE FROM replay_guard r USING batch WHERE r.digest = batch.digest`,
  // An Idempotency-Key expires by its own expires_at (the period, set when it is written);
  // miniapp_order_id keys (no expiry) last as long as their payment.
  idempotency_keys: `WITH batch AS (
      SELECT key FROM idempotency_keys WHERE expires_at IS NOT NULL AND expires_at < $1 ORDER BY expires_at LIMIT $2
      FOR UPDATE SKIP LOCKED)
    DELETE FROM idempotency_keys k USING batch WHERE k.key = batch.key`,
  // A settled payment and everything it left behind, once its financial record has aged out: the
  // period runs from its last transition, not its creation (one settled only now, after long in
  // process, is still owed its E6 and its statement line), and a pending E6 keeps it.
  financial_record: `WITH batch AS (
      SELECT client_id, order_payment_id FROM order_payments p WHERE payment_status <> 'in_process' AND created_at < $1
        AND NOT EXISTS (SELECT 1 FROM payment_status_history h
          WHERE h.client_id = p.client_id AND h.order_payment_id = p.order_payment_id AND h.at >= $1)
        AND NOT EXISTS (SELECT 1 FROM deliveries d
          WHERE d.client_id = p.client_id AND d.order_payment_id = p.order_payment_id AND d.status = 'pending')
      ORDER BY created_at LIMIT $2 FOR UPDATE OF p SKIP LOCKED),
    gone_deliveries AS (
      SELECT d.delivery_id FROM deliveries d JOIN batch b ON d.client_id = b.client_id AND d.order_payment_id = b.order_payment_id),
    attempts AS (DELETE FROM delivery_attempts a USING gone_deliveries g WHERE a.delivery_id = g.delivery_id),
    deliveries AS (DELETE FROM deliveries d USING gone_deliveries g WHERE d.delivery_id = g.delivery_id),
    history AS (DELETE FROM payment_status_history h USING batch b WHERE h.client_id = b.client_id AND h.order_payment_id = b.order_payment_id),
    asks AS (DELETE FROM reconcile_asks r USING batch b WHERE r.client_id = b.client_id AND r.order_payment_id = b.order_payment_id),
    lines AS (DELETE FROM statement_lines s USING batch b WHERE s.client_id = b.client_id AND s.order_payment_id = b.order_payment_id)
    DELETE FROM order_payments p USING batch b WHERE p.client_id = b.client_id AND p.order_payment_id = b.order_payment_id`,
};

export function createRetention(db: Db, clock: Clock, financialMembers: readonly string[]): Retention {
  return {
    async purge(kind, periodMs, limit) {
      const now = clock();
      // A replay-guard entry stays until every instance's clock is past its expiry (ADR 0038): a purge
      // on this clock alone would hand an instance running behind a replay inside its window.
      const cutoff =
        kind === 'idempotency_keys' ? now : new Date(now.getTime() - periodMs - (kind === 'replay_guard' ? REPLAY_PURGE_GRACE_MS : 0));
      const params: unknown[] = [cutoff, limit];
      if (kind === 'event_payloads') params.push(now);
      if (kind === 'order_personal_details') params.push([...financialMembers], now);
      if (kind === 'financial_record') {
        const gone = await db.query<{ app_id: string; client_id: string; miniapp_order_id: string | null; order_payment_id: string }>(
          `${purgeStatements[kind]} RETURNING p.app_id, p.client_id, p.miniapp_order_id, p.order_payment_id`,
          params,
        );
        // Its miniapp_order_id key goes with it: a repeat of that order after the record is gone is a new order.
        const keys = gone.flatMap((row) =>
          row.miniapp_order_id === null ? [] : idempotencyKeys({ ...row, idempotency_key: null }).map((key) => key.key),
        );
        if (keys.length > 0)
          await db.query('DELETE FROM idempotency_keys WHERE key = ANY($1::text[]) AND order_payment_id = ANY($2::text[])', [
            keys,
            gone.map((row) => row.order_payment_id),
          ]);
        return gone.length;
      }
      // A batch is at most `limit` rows: their count travels back as that many empty rows.
      const rows = await db.query(`${purgeStatements[kind]} RETURNING 1`, params);
      return rows.length;
    },

    eraseUser(clientId, hostappUserId, userDigest, within) {
      return db.transaction(async (tx) => {
        const now = clock();
        const payments = await tx.query<{ order_payment_id: string }>(
          `UPDATE order_payments p SET hostapp_user_id = NULL, order_json = ${redactedOrder('p.order_json')}, custom_attributes = NULL,
             erased_user_digest = $4, personal_redacted_at = COALESCE(personal_redacted_at, $5)
           WHERE client_id = $1 AND hostapp_user_id = $2 RETURNING order_payment_id`,
          [clientId, hostappUserId, [...financialMembers], userDigest, now],
        );
        const events = await tx.query<{ id: string }>(
          `UPDATE event_log SET payload = NULL, receiver_response = NULL, names_user = NULL, payload_dropped_at = COALESCE(payload_dropped_at, $4)
           WHERE client_id = $1 AND (payload IS NOT NULL OR receiver_response IS NOT NULL OR names_user IS NOT NULL)
             AND (names_user = $2 OR names_payment IN (
               SELECT order_payment_id FROM order_payments WHERE client_id = $1 AND erased_user_digest = $3))
           RETURNING id`,
          [clientId, hostappUserId, userDigest, now],
        );
        const counts = { payments: payments.length, events: events.length };
        await within?.(tx, counts);
        return counts;
      });
    },
  };
}
