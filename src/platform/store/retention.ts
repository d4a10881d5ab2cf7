import type { Db } from './db.js';
import { idempotencyKeys } from './idempotency.js';
import { REPLAY_PURGE_GRACE_MS } from './replayGuard.js';
import type { Clock } from './time.js';
import { hasCustomAttributes, redactedOrder, withoutCustomAttributes } from './redactedOrder.js';

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
   * payments (marked with `userDigest`, so a repeat finds events and deliveries made since), the
   * custom attributes in the stored E6 bodies of those payments (delivered or pending: a pending
   * E6 is still sent, without them), and the payload and receiver answer of every logged event
   * naming the user or one of those payments. In batches of at most `batchSize` rows, each
   * statement its own short transaction, so a user with any number of payments never holds locks
   * or runs into the statement time-out; what a batch erased no longer matches, so a repeat, or a
   * run cut short and run again, erases only what remains. Counts what this call changed.
   */
  eraseUser(clientId: string, hostappUserId: string, userDigest: string, batchSize: number): Promise<ErasureCounts>;
}

/**
 * One batch of each kind (ADR 0041). Parameters: $1 the cutoff, $2 the batch size, $3 where this
 * instance's previous full batch of the kind ended (NULL: from the oldest), then the kind's own
 * ($4 now, $5 the financial members). Each batch
 * - reads its rows from the kind's index in key order from $3 on, so it never walks again over
 *   the entries of rows already purged (they stay in the index until a vacuum, and a scan from
 *   the oldest read them all again on every batch: a cost that grew with what had been purged);
 * - locks them FOR UPDATE SKIP LOCKED (instances take disjoint batches; a row another
 *   transaction holds is skipped, never waited for) and changes them by their ctid (the row
 *   version just locked), not by a second lookup of each in the primary key, whose pages a large
 *   history spreads over the disk;
 * - answers how many it changed and the last key (`purged`, `last`).
 */
const purgeStatements: Record<Exclude<PurgeKind, 'financial_record'>, string> = {
  event_payloads: `WITH batch AS (
      SELECT ctid AS row_id, at AS key FROM event_log
      WHERE payload_dropped_at IS NULL AND at < $1 AND at >= COALESCE($3::timestamptz, '-infinity') ORDER BY at LIMIT $2
      FOR UPDATE SKIP LOCKED),
    gone AS (UPDATE event_log e SET payload = NULL, receiver_response = NULL, names_users = NULL, payload_dropped_at = $4
      FROM batch WHERE e.ctid = batch.row_id RETURNING batch.key)
    SELECT count(*)::int AS purged, max(key) AS last FROM gone`,
  deliveries: `WITH batch AS (
      SELECT ctid AS row_id, delivery_id, created_at AS key FROM deliveries
      WHERE status <> 'pending' AND created_at < $1 AND created_at >= COALESCE($3::timestamptz, '-infinity') ORDER BY created_at LIMIT $2
      FOR UPDATE SKIP LOCKED),
    attempts AS (DELETE FROM delivery_attempts a USING batch WHERE a.delivery_id = batch.delivery_id),
    gone AS (DELETE FROM deliveries d USING batch WHERE d.ctid = batch.row_id RETURNING batch.key)
    SELECT count(*)::int AS purged, max(key) AS last FROM gone`,
  reconcile_asks: `WITH batch AS (
      SELECT ctid AS row_id, asked_at AS key FROM reconcile_asks
      WHERE asked_at < $1 AND asked_at >= COALESCE($3::timestamptz, '-infinity') ORDER BY asked_at LIMIT $2 FOR UPDATE SKIP LOCKED),
    gone AS (DELETE FROM reconcile_asks r USING batch WHERE r.ctid = batch.row_id RETURNING batch.key)
    SELECT count(*)::int AS purged, max(key) AS last FROM gone`,
  // Settled payments only: one still in process is still asked about (E4 sends its user id).
  order_personal_details: `WITH batch AS (
      SELECT ctid AS row_id, created_at AS key FROM order_payments
      WHERE personal_redacted_at IS NULL AND payment_status <> 'in_process' AND created_at < $1
        AND created_at >= COALESCE($3::timestamptz, '-infinity')
      ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED),
    gone AS (UPDATE order_payments p SET order_json = ${redactedOrder('p.order_json', '$5')}, custom_attributes = NULL,
        hostapp_user_id = NULL, personal_redacted_at = $4
      FROM batch WHERE p.ctid = batch.row_id RETURNING batch.key)
    SELECT count(*)::int AS purged, max(key) AS last FROM gone`,
  replay_guard: `WITH batch AS (
      SELECT ctid AS row_id, expires_at AS key FROM replay_guard
      WHERE expires_at < $1 AND expires_at >= COALESCE($3::timestamptz, '-infinity') ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED),
    gone AS (DELETE FROM replay_guard r USING batch WHERE r.ctid = batch.row_id RETURNING batch.key)
    SELECT count(*)::int AS purged, max(key) AS last FROM gone`,
  // An Idempotency-Key expires by its own expires_at (the period, set when it is written);
  // miniapp_order_id keys (no expiry) last as long as their payment.
  idempotency_keys: `WITH batch AS (
      SELECT ctid AS row_id, expires_at AS key FROM idempotency_keys
      WHERE expires_at IS NOT NULL AND expires_at < $1 AND expires_at >= COALESCE($3::timestamptz, '-infinity')
      ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED),
    gone AS (DELETE FROM idempotency_keys k USING batch WHERE k.ctid = batch.row_id RETURNING batch.key)
    SELECT count(*)::int AS purged, max(key) AS last FROM gone`,
};

// A settled payment and everything it left behind, once its financial record has aged out: the
// period runs from its last transition, not its creation (one settled only now, after long in
// process, is still owed its E6 and its statement line), and a pending E6 keeps it.
const financialRecordStatement = `WITH batch AS (
      SELECT p.ctid AS row_id, client_id, order_payment_id FROM order_payments p
      WHERE payment_status <> 'in_process' AND created_at < $1 AND created_at >= COALESCE($3::timestamptz, '-infinity')
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
    DELETE FROM order_payments p USING batch b WHERE p.ctid = b.row_id
    RETURNING p.app_id, p.client_id, p.miniapp_order_id, p.order_payment_id, p.created_at`;

export function createRetention(db: Db, clock: Clock, financialMembers: readonly string[]): Retention {
  /**
   * Per kind, the key where this instance's last full batch ended: the next batch starts there.
   * A short batch (the kind caught up) starts the next one from the oldest again, so a row that
   * was skipped while another transaction held it, or that became due below the mark (a payment
   * settled late), is taken then.
   */
  const resumeFrom = new Map<PurgeKind, Date>();
  const advance = (kind: PurgeKind, count: number, limit: number, last: Date | null) => {
    if (count >= limit && last) resumeFrom.set(kind, last);
    else resumeFrom.delete(kind);
  };

  return {
    async purge(kind, periodMs, limit) {
      const now = clock();
      // A replay-guard entry stays until every instance's clock is past its expiry (ADR 0038): a purge
      // on this clock alone would hand an instance running behind a replay inside its window.
      const cutoff =
        kind === 'idempotency_keys' ? now : new Date(now.getTime() - periodMs - (kind === 'replay_guard' ? REPLAY_PURGE_GRACE_MS : 0));
      const params: unknown[] = [cutoff, limit, resumeFrom.get(kind) ?? null];
      if (kind === 'financial_record') {
        const gone = await db.query<{
          app_id: string;
          client_id: string;
          miniapp_order_id: string | null;
          order_payment_id: string;
          created_at: Date;
        }>(financialRecordStatement, params);
        // Its miniapp_order_id key goes with it: a repeat of that order after the record is gone is a new order.
        const keys = gone.flatMap((row) =>
          row.miniapp_order_id === null ? [] : idempotencyKeys({ ...row, idempotency_key: null }).map((key) => key.key),
        );
        if (keys.length > 0)
          await db.query('DELETE FROM idempotency_keys WHERE key = ANY($1::text[]) AND order_payment_id = ANY($2::text[])', [
            keys,
            gone.map((row) => row.order_payment_id),
          ]);
        const last = gone.reduce<Date | null>((latest, row) => (latest && latest > row.created_at ? latest : row.created_at), null);
        advance(kind, gone.length, limit, last);
        return gone.length;
      }
      if (kind === 'event_payloads') params.push(now);
      if (kind === 'order_personal_details') params.push(now, [...financialMembers]);
      const [row] = await db.query<{ purged: number; last: Date | null }>(purgeStatements[kind], params);
      advance(kind, row!.purged, limit, row!.last);
      return row!.purged;
    },

    async eraseUser(clientId, hostappUserId, userDigest, batchSize) {
      const counts: ErasureCounts = { payments: 0, events: 0 };
      const now = clock();
      /** Runs one batch statement (its last parameter the batch size) until it changes fewer rows than a batch: what it changed no longer matches. */
      const drain = async (sql: string, params: unknown[]) => {
        let total = 0;
        for (;;) {
          const changed = (await db.query(sql, [...params, batchSize])).length;
          total += changed;
          if (changed < batchSize) return total;
        }
      };
      counts.payments = await drain(erasureStatements.payments, [clientId, hostappUserId, [...financialMembers], userDigest, now]);
      counts.events += await drain(erasureStatements.eventsNamingUser, [clientId, hostappUserId, now]);
      // Every payment erased for this user, this time or before, in key order: their E6 bodies and
      // the events naming them, a window of payments at a time.
      for (let after = ''; ;) {
        const window = await db.query<{ order_payment_id: string }>(erasureStatements.erasedPayments, [
          clientId,
          userDigest,
          after,
          batchSize,
        ]);
        if (window.length === 0) break;
        const ids = window.map((row) => row.order_payment_id);
        counts.payments += await drain(erasureStatements.settledSince, [clientId, ids]);
        await drain(erasureStatements.deliveries, [clientId, ids]);
        counts.events += await drain(erasureStatements.eventsNamingPayments, [clientId, ids, now]);
        if (window.length < batchSize) break;
        after = ids[ids.length - 1]!;
      }
      return counts;
    },
  };
}

/**
 * The erasure's batches (ADR 0041), each one statement, so its own transaction: it locks at most
 * a batch of rows for as long as it runs. The last parameter of each is the batch size.
 */
const erasureStatements = {
  // $1 client, $2 user, $3 the financial members, $4 the user's digest, $5 now.
  payments: `WITH batch AS (
      SELECT order_payment_id FROM order_payments WHERE client_id = $1 AND hostapp_user_id = $2 LIMIT $6 FOR UPDATE)
    UPDATE order_payments p SET hostapp_user_id = NULL, order_json = ${redactedOrder('p.order_json', '$3')}, custom_attributes = NULL,
      erased_user_digest = $4,
      -- Still in process, it is not redacted for good: its E5 or E4 may yet bring custom attributes,
      -- which its period must still take (the purge reads only rows never redacted).
      personal_redacted_at = CASE WHEN p.payment_status = 'in_process' THEN personal_redacted_at
        ELSE COALESCE(personal_redacted_at, $5) END
    FROM batch WHERE p.client_id = $1 AND p.order_payment_id = batch.order_payment_id AND p.hostapp_user_id = $2
    RETURNING p.order_payment_id`,
  // $1 client, $2 user, $3 now.
  eventsNamingUser: `WITH batch AS (
      SELECT id FROM event_log WHERE client_id = $1 AND names_users IS NOT NULL AND names_users @> ARRAY[$2::text] LIMIT $4 FOR UPDATE)
    UPDATE event_log e SET payload = NULL, receiver_response = NULL, names_users = NULL, payload_dropped_at = COALESCE(payload_dropped_at, $3)
    FROM batch WHERE e.id = batch.id RETURNING e.id`,
  // $1 client, $2 digest, $3 after this payment id, $4 how many.
  erasedPayments: `SELECT order_payment_id FROM order_payments
    WHERE client_id = $1 AND erased_user_digest = $2 AND order_payment_id > $3 ORDER BY order_payment_id LIMIT $4`,
  // $1 client, $2 payment ids. A payment erased while in process was settled since by an E5 or E4
  // carrying custom attributes: the payment's own copy goes like its E6's (ADR 0041).
  settledSince: `WITH batch AS (
      SELECT order_payment_id FROM order_payments
      WHERE client_id = $1 AND order_payment_id = ANY($2::text[]) AND custom_attributes IS NOT NULL LIMIT $3 FOR UPDATE)
    UPDATE order_payments p SET custom_attributes = NULL
    FROM batch WHERE p.client_id = $1 AND p.order_payment_id = batch.order_payment_id RETURNING p.order_payment_id`,
  // $1 client, $2 payment ids. Of a payment's personal data an E6 body (OrderCompletion) carries its
  // custom_attributes, which go; the ids, the status and the reason stay, so a pending E6 still
  // tells the miniapp the outcome.
  deliveries: `WITH batch AS (
      SELECT delivery_id FROM deliveries
      WHERE client_id = $1 AND order_payment_id = ANY($2::text[]) AND ${hasCustomAttributes('body')} LIMIT $3 FOR UPDATE)
    UPDATE deliveries d SET body = ${withoutCustomAttributes('d.body')}
    FROM batch WHERE d.delivery_id = batch.delivery_id RETURNING d.delivery_id`,
  // $1 client, $2 payment ids, $3 now.
  eventsNamingPayments: `WITH batch AS (
      SELECT id FROM event_log
      WHERE client_id = $1 AND names_payments IS NOT NULL AND names_payments && $2::text[]
        AND (payload IS NOT NULL OR receiver_response IS NOT NULL OR names_users IS NOT NULL)
      LIMIT $4 FOR UPDATE)
    UPDATE event_log e SET payload = NULL, receiver_response = NULL, names_users = NULL, payload_dropped_at = COALESCE(payload_dropped_at, $3)
    FROM batch WHERE e.id = batch.id RETURNING e.id`,
};
