import { randomUUID } from 'node:crypto';
import type { components } from '../../../generated/types/platform.js';
import type { Db } from './db.js';
import { seekPayment, type OrderPaymentRef } from './orderPayments.js';
import { addMs, type Clock } from './time.js';

type ReconcileAsk = components['schemas']['ReconcileAsk'];
type PaymentStatus = components['schemas']['PaymentStatus'];

/** A payment an instance holds the reconciliation lease on: it asks the host app about it now. */
export interface ReconcileClaim extends OrderPaymentRef {
  hostapp_user_id: string | null;
  created_at: Date;
  expires_at: Date;
  /** Asks made, this one included. */
  asks: number;
  stuck_since: Date | null;
  /** Proof of the lease; recordAsk is refused once another claim replaced it. */
  lease_id: string;
}

/** What one ask found, and when to ask next. */
export interface AskRecord extends OrderPaymentRef {
  lease_id: string;
  asked_at: Date;
  duration_ms: number;
  outcome: ReconcileAsk['outcome'];
  /** The status the host app answered, when it answered one. */
  payment_status?: PaymentStatus;
  detail?: string;
  /** When to ask again; null: no more asks (settled, or past the final horizon). */
  next_at: Date | null;
  /** The payment is stuck from now (nextAsk: still in process after its expiry, or unanswered long after it). */
  stuck: boolean;
  /** The expiry `next_at` and `stuck` were judged against: the claim's. */
  expires_at: Date;
}

export interface ReconcileClaimOptions {
  limit: number;
  leaseMs: number;
  /** Asks open to one host app at once, across instances (x-reconciliation.maxInFlight). */
  maxInFlightPerHostapp: number;
  /** Host apps this instance is backing off from: none of their payments is claimed. */
  skipHostapps?: readonly string[];
}

export interface Reconciliation {
  /**
   * Leases up to `limit` payments due for an ask, each host app's oldest due first and the oldest
   * of those first, counting the ask; a host app already holding `maxInFlightPerHostapp` live
   * leases (on any instance) gets none, and one holding fewer gets at most the difference.
   */
  claimDue(options: ReconcileClaimOptions): Promise<ReconcileClaim[]>;
  /**
   * Whether any payment is due for an ask and unleased: claimDue's due condition without its
   * bounds (caps, paused host apps), so false only when a claim would lease nothing (ADR 0050).
   */
  anyDue(): Promise<boolean>;
  /** Records an ask, schedules the next and frees the lease; false when the lease was lost. */
  recordAsk(ask: AskRecord): Promise<boolean>;
  /** Frees a lease without asking (a budget refused it): the ask is not counted; due again at `at`. */
  postpone(ref: OrderPaymentRef, leaseId: string, at: Date): Promise<void>;
  /** Payments in process past their expiry that the last ask did not settle. */
  countStuck(): Promise<number>;
}

/** Any fixed key, distinct from the E6 claim's: it only has to be the same for every claimer. */
const claimLockStatement = { name: 'store.reconciliation.claimLock', text: 'SELECT pg_advisory_xact_lock(8009) AS locked' };

/**
 * Leases due payments (ADR 0039), as the E6 claim leases deliveries (ADR 0008, 0037): per host
 * app at most $4 leases live at once (counted across instances under the claim lock), each host
 * app's oldest due payments taken up to its free slots, the oldest of all those first, at most $3.
 * Rows another statement is changing (an E5 settling it) are skipped rather than waited for, and
 * the final guard repeats the due condition for a row changed since it was read. The lease
 * changes no key, so the lock is FOR NO KEY UPDATE: a row that a statement only references (an
 * insert whose foreign key names the payment holds FOR KEY SHARE) is leased, not skipped. A
 * skipped row still took its place among the chosen: that claim leases fewer, and the next one
 * (the reconciler claims again within a second) takes it once the change has committed.
 *
 * Its cost is the host apps with payments to ask about times their slots, whatever the backlog:
 * the host apps are found by a loose scan of order_payments_reconcile_due_by_hostapp (one seek
 * per host app), and each host app's due payments by a seek on (client_id, reconcile_next_at)
 * that stops after its free slots; the live leases it reads past are at most $4. A host app at
 * its cap, paused here ($5) or with nothing due costs its two seeks, so a claim with nothing due
 * costs two seeks per host app with a payment in process (ADR 0039). (A walk of the whole due backlog in
 * time order, as before, was planned as a read and a sort of every due payment where no
 * statistics say otherwise, PGlite, and read past every payment of a paused host app.)
 *
 * Its plan is kept from a platform's start (ADR 0013), so each table is reached through an index
 * whatever the sizes it was planned on. The leases in flight are a range, the upper bound one no
 * lease reaches (a lease ends $2 at the latest, a day covers any instance's clock): priced at a
 * few rows, it reads order_payments_reconcile_leased, where a lower bound alone read the table
 * whole. Only the chosen rows are locked (FOR NO KEY UPDATE SKIP LOCKED, found again by a seek on the
 * primary key, seekPayment, then by their ctid): a lock writes a WAL record and dirties a page
 * per row. The chosen rows are updated by their ctid alone, not joined with order_payments on
 * columns a plan could hash the table on.
 */
const claimStatement = {
  name: 'store.reconciliation.claimDue',
  text: `WITH RECURSIVE hostapps AS (
      (SELECT p.client_id FROM order_payments p
       WHERE p.payment_status = 'in_process' AND p.reconcile_next_at IS NOT NULL
       ORDER BY p.client_id LIMIT 1)
      UNION ALL
      SELECT (SELECT p.client_id FROM order_payments p
              WHERE p.payment_status = 'in_process' AND p.reconcile_next_at IS NOT NULL AND p.client_id > h.client_id
              ORDER BY p.client_id LIMIT 1)
      FROM hostapps h WHERE h.client_id IS NOT NULL
    ),
    in_flight AS (
      SELECT client_id, count(*)::int AS leased FROM order_payments
      WHERE reconcile_lease_until >= $1 AND reconcile_lease_until < $2::timestamptz + interval '1 day'
      GROUP BY client_id
    ),
    candidates AS (
      SELECT d.client_id, d.order_payment_id, d.reconcile_next_at
      FROM hostapps h
      LEFT JOIN in_flight f ON f.client_id = h.client_id
      CROSS JOIN LATERAL (
        SELECT p.client_id, p.order_payment_id, p.reconcile_next_at FROM order_payments p
        WHERE p.client_id = h.client_id AND p.payment_status = 'in_process' AND p.reconcile_next_at IS NOT NULL
          AND p.reconcile_next_at <= $1 AND (p.reconcile_lease_until IS NULL OR p.reconcile_lease_until < $1)
        ORDER BY p.reconcile_next_at
        LIMIT greatest($4::integer - coalesce(f.leased, 0), 0)
      ) AS d
      WHERE h.client_id IS NOT NULL AND h.client_id <> ALL ($5::text[])
    ),
    chosen AS (
      SELECT client_id, order_payment_id FROM candidates
      ORDER BY reconcile_next_at
      LIMIT $3
    ),
    found AS (
      SELECT k.row_id FROM chosen c CROSS JOIN ${seekPayment('c', 'k.ctid AS row_id, k.client_id, k.order_payment_id')} AS k
      WHERE k.client_id = c.client_id AND k.order_payment_id = c.order_payment_id
    ),
    locked AS (
      SELECT l.ctid AS row_id FROM found f CROSS JOIN order_payments l
      WHERE l.ctid = f.row_id
      FOR NO KEY UPDATE OF l SKIP LOCKED
    )
    UPDATE order_payments p SET reconcile_lease_id = $6::uuid, reconcile_lease_until = $2, reconcile_asks = p.reconcile_asks + 1
    FROM locked c
    WHERE p.ctid = c.row_id
      AND p.payment_status = 'in_process' AND (p.reconcile_lease_until IS NULL OR p.reconcile_lease_until < $1)
    RETURNING p.client_id, p.order_payment_id, p.app_id, p.hostapp_user_id, p.created_at, p.expires_at,
      p.reconcile_asks, p.stuck_since, p.reconcile_next_at`,
};

/**
 * claimDue's due condition alone, found as the claim finds it (ADR 0050): the host apps with a
 * payment in process by the loose scan of order_payments_reconcile_due_by_hostapp, then for each a
 * seek on (client_id, reconcile_next_at) up to now that stops at its first unleased payment (a
 * LATERAL with LIMIT 1: as EXISTS, the planner may hash every due payment of the host apps). Two
 * seeks per host app with a payment in process, whatever the backlog, no lock and no transaction.
 */
const anyDueStatement = {
  name: 'store.reconciliation.anyDue',
  text: `WITH RECURSIVE hostapps AS (
      (SELECT p.client_id FROM order_payments p
       WHERE p.payment_status = 'in_process' AND p.reconcile_next_at IS NOT NULL
       ORDER BY p.client_id LIMIT 1)
      UNION ALL
      SELECT (SELECT p.client_id FROM order_payments p
              WHERE p.payment_status = 'in_process' AND p.reconcile_next_at IS NOT NULL AND p.client_id > h.client_id
              ORDER BY p.client_id LIMIT 1)
      FROM hostapps h WHERE h.client_id IS NOT NULL
    )
    SELECT 1 AS due FROM hostapps h
    CROSS JOIN LATERAL (
      SELECT 1 FROM order_payments p
      WHERE p.client_id = h.client_id AND p.payment_status = 'in_process' AND p.reconcile_next_at IS NOT NULL
        AND p.reconcile_next_at <= $1 AND (p.reconcile_lease_until IS NULL OR p.reconcile_lease_until < $1)
      ORDER BY p.reconcile_next_at
      LIMIT 1
    ) AS d
    WHERE h.client_id IS NOT NULL
    LIMIT 1`,
};

/**
 * The ask's record and the next one's schedule in one statement, guarded by the lease. A retried
 * E3 may have given the payment a later expiry while it was asked (ADR 0039), and with it a new
 * schedule: an ask judged against the earlier expiry then neither marks it stuck nor puts its
 * next ask after the one that schedule set.
 */
const recordStatement = {
  name: 'store.reconciliation.recordAsk',
  text: `WITH updated AS (
      UPDATE order_payments SET reconcile_lease_id = NULL, reconcile_lease_until = NULL,
        reconcile_next_at = CASE WHEN expires_at IS NOT DISTINCT FROM $11::timestamptz THEN $5::timestamptz
          ELSE LEAST($5::timestamptz, reconcile_next_at) END,
        stuck_since = CASE WHEN $6::boolean AND expires_at IS NOT DISTINCT FROM $11::timestamptz
          THEN COALESCE(stuck_since, $4::timestamptz) ELSE stuck_since END
      WHERE client_id = $1 AND order_payment_id = $2 AND reconcile_lease_id = $3::uuid
      RETURNING client_id, order_payment_id
    )
    INSERT INTO reconcile_asks (client_id, order_payment_id, asked_at, duration_ms, outcome, payment_status, detail)
    SELECT client_id, order_payment_id, $4, $7, $8, $9, $10 FROM updated
    RETURNING id`,
};

interface ClaimRow {
  client_id: string;
  order_payment_id: string;
  app_id: string;
  hostapp_user_id: string | null;
  created_at: Date;
  expires_at: Date;
  reconcile_asks: number;
  stuck_since: Date | null;
  reconcile_next_at: Date;
}

export function createReconciliation(db: Db, clock: Clock): Reconciliation {
  return {
    async claimDue({ limit, leaseMs, maxInFlightPerHostapp, skipHostapps = [] }) {
      const now = clock();
      const leaseId = randomUUID();
      const rows = await db.transaction(async (tx) => {
        await tx.query(claimLockStatement);
        return tx.query<ClaimRow>(claimStatement, [now, addMs(now, leaseMs), limit, maxInFlightPerHostapp, [...skipHostapps], leaseId]);
      });
      return rows
        .sort((a, b) => a.reconcile_next_at.getTime() - b.reconcile_next_at.getTime())
        .map((row) => ({
          order_payment_id: row.order_payment_id,
          app_id: row.app_id,
          client_id: row.client_id,
          hostapp_user_id: row.hostapp_user_id,
          created_at: row.created_at,
          expires_at: row.expires_at,
          asks: row.reconcile_asks,
          stuck_since: row.stuck_since,
          lease_id: leaseId,
        }));
    },

    async anyDue() {
      return (await db.query(anyDueStatement, [clock()])).length > 0;
    },

    async recordAsk(ask) {
      const rows = await db.query(recordStatement, [
        ask.client_id,
        ask.order_payment_id,
        ask.lease_id,
        ask.asked_at,
        ask.next_at,
        ask.stuck,
        ask.duration_ms,
        ask.outcome,
        ask.payment_status ?? null,
        ask.detail?.slice(0, 1000) ?? null,
        ask.expires_at,
      ]);
      return rows.length > 0;
    },

    async postpone(ref, leaseId, at) {
      await db.query(
        `UPDATE order_payments SET reconcile_lease_id = NULL, reconcile_lease_until = NULL, reconcile_next_at = $4,
           reconcile_asks = reconcile_asks - 1
         WHERE client_id = $1 AND order_payment_id = $2 AND reconcile_lease_id = $3::uuid`,
        [ref.client_id, ref.order_payment_id, leaseId, at],
      );
    },

    async countStuck() {
      const [row] = await db.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM order_payments WHERE payment_status = 'in_process' AND stuck_since IS NOT NULL",
      );
      return row!.count;
    },
  };
}
