import type { components } from '../../../generated/types/platform.js';
import { randomUUID } from 'node:crypto';
import { DatabaseUnavailableError } from './availability.js';
import { batched, inRounds, type BatchOptions } from './batch.js';
import type { Db, Queryable } from './db.js';
import { addMs, isoOrNull, type Clock } from './time.js';

type Delivery = components['schemas']['Delivery'];
type DeliveryAttempt = components['schemas']['DeliveryAttempt'];
type DeliveryDetail = components['schemas']['DeliveryDetail'];
type DeliveryList = components['schemas']['DeliveryList'];
type DeliveryStatus = components['schemas']['DeliveryStatus'];
type PaymentStatus = components['schemas']['PaymentStatus'];

export interface NewDelivery {
  event_id: string;
  client_id: string;
  order_payment_id: string;
  app_id: string;
  payment_status: PaymentStatus;
  /** The E6 body as JSON text, sent unchanged on every attempt. */
  body: string;
}

/** A delivery a worker holds the lease on, with what it needs to make the next attempt. */
export interface ClaimedDelivery {
  delivery: Delivery;
  body: string;
  /** Number of the attempt about to be made (X-Minibridge-Delivery-Attempt). */
  attempt: number;
  /** Proof of the lease; recordAttempt is refused once another claim replaced it. */
  lease_id: string;
  /** Start of the current 72-hour schedule (the transition, or the last redelivery). */
  horizon_started_at: string;
  /** Its number within that schedule: the back-off's place (1 at the transition's first attempt, and at a redelivery's). */
  schedule_attempt: number;
  /** The attempt before it was lost (its lease ended with no outcome recorded, ADR 0037). */
  follows_lost_attempt: boolean;
}

export type AttemptResult =
  | { outcome: 'delivered'; http_status: number }
  /** retry_at: when to try again; null ends the schedule and marks the delivery dead. */
  | { outcome: 'failed'; http_status?: number; error: string; retry_at: Date | null };

export interface AttemptRecord {
  delivery_id: string;
  lease_id: string;
  started_at: Date;
  duration_ms: number;
  result: AttemptResult;
}

/** Pass a finished attempt's slot on to its miniapp's next due delivery (ADR 0033). */
export interface HandOff {
  /** How long the successor's lease lasts. */
  leaseMs: number;
}

export interface RecordedAttempt {
  /** The delivery after the attempt; null when the lease was lost (nothing recorded). */
  delivery: Delivery | null;
  /**
   * Due deliveries of the same miniapp leased in the slot the attempt freed, oldest first: the
   * caller starts them at once. Empty when the lease was lost or nothing of that miniapp is due.
   */
  successors: ClaimedDelivery[];
}

export interface ListDeliveriesQuery {
  status?: DeliveryStatus;
  /** Only one miniapp's deliveries (the dashboard's partner view). */
  appId?: string;
  /** Only deliveries for one host app's payments. */
  clientId?: string;
  /** Only deliveries for the payment(s) with this order_payment_id. */
  orderPaymentId?: string;
  limit: number;
  cursor?: string;
}

/** The cursor passed to listDeliveries is not one it produced. */
export class InvalidCursorError extends Error {
  constructor(cursor: string) {
    super(`Invalid cursor: ${cursor}`);
    this.name = 'InvalidCursorError';
  }
}

export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  maxInFlightPerMiniapp?: number;
}

export interface Outbox {
  /**
   * Leases up to `limit` due deliveries; no other claimer gets them until the lease ends. With
   * `maxInFlightPerMiniapp`, a miniapp that already has that many leased (in flight, on any
   * instance) gets none, so a slow miniapp holds at most that many leases (ADR 0008).
   */
  claimDue(options: ClaimOptions): Promise<ClaimedDelivery[]>;
  /**
   * Whether any delivery is due and unleased: what claimDue would look for, without its lock,
   * its transaction or the miniapps' bounds. False means a claim now would find nothing.
   */
  anyDue(): Promise<boolean>;
  /**
   * The live leases taken by this process's lease statements whose answer was lost with the
   * database (ADR 0037): the caller makes their attempts now instead of after the leases end.
   * Each is renewed for `leaseMs` from now, since its attempt starts now (ADR 0008).
   */
  recoverLeases(options: { leaseMs: number }): Promise<ClaimedDelivery[]>;
  /** Records one attempt; null when the lease was lost (nothing recorded). */
  recordAttempt(record: AttemptRecord): Promise<Delivery | null>;
  /**
   * Records one attempt and, in the same statement, hands the slot it frees to the oldest due
   * delivery of the same miniapp, leased for `handOff.leaseMs` (ADR 0033). A slot changes hands
   * without ever being free, so the miniapp's live leases never grow and no claim lock is
   * needed; a lease that had already run out frees no slot and hands nothing on.
   */
  recordAndHandOff(record: AttemptRecord, handOff: HandOff): Promise<RecordedAttempt>;
  list(query: ListDeliveriesQuery): Promise<DeliveryList>;
  get(deliveryId: string): Promise<DeliveryDetail | null>;
  /**
   * A redelivery (ADR 0038): queues an attempt now with a fresh schedule, whatever the state,
   * but never touches a live lease. While an attempt is in flight (`coalesced: true`) the
   * delivery is left as it is: that attempt is the redelivery, and a second request to the
   * miniapp for one delivery, or one past its `x-max-in-flight`, is never opened. A delivery
   * already due keeps its place in the queue. Null when unknown. `q`: run in the caller's
   * transaction (with its audit entries).
   */
  requeue(deliveryId: string, q?: Queryable): Promise<{ delivery: Delivery; coalesced: boolean } | null>;
  countPending(): Promise<number>;
}

interface DeliveryRow extends NewDelivery {
  delivery_id: string;
  seq: string;
  status: DeliveryStatus;
  attempts_made: number;
  /** Attempts begun (leases taken); null on rows from before it was counted: attempts_made. */
  attempts_started: number | null;
  next_attempt_at: Date | null;
  lease_id: string | null;
  horizon_started_at: Date;
  /** The attempt the current schedule began with; null for 1 (migration 099). */
  schedule_first_attempt: number | null;
  created_at: Date;
  delivered_at: Date | null;
  last_error: string | null;
}

interface AttemptRow {
  attempt: number;
  started_at: Date;
  duration_ms: number;
  outcome: DeliveryAttempt['outcome'];
  http_status: number | null;
  error: string | null;
}

// int8 arrives as a string from pg and as a number from PGlite; text is the same everywhere.
const deliveryColumnExpressions: Record<keyof DeliveryRow, string> = {
  delivery_id: 'delivery_id::text',
  seq: 'seq::text',
  event_id: 'event_id',
  client_id: 'client_id',
  order_payment_id: 'order_payment_id',
  app_id: 'app_id',
  payment_status: 'payment_status',
  body: 'body',
  status: 'status',
  attempts_made: 'attempts_made',
  attempts_started: 'attempts_started',
  next_attempt_at: 'next_attempt_at',
  lease_id: 'lease_id::text',
  horizon_started_at: 'horizon_started_at',
  schedule_first_attempt: 'schedule_first_attempt',
  created_at: 'created_at',
  delivered_at: 'delivered_at',
  last_error: 'last_error',
};

/**
 * The select list of a delivery row, read from `source` (a table or CTE name) and named with
 * `prefix` so it can share a result row with another table's columns.
 */
export function deliveryColumns(source: string, prefix = ''): string {
  return Object.entries(deliveryColumnExpressions)
    .map(([name, expression]) => `${source}.${expression} AS ${prefix}${name}`)
    .join(', ');
}

/** The delivery whose columns were selected with deliveryColumns(source, prefix). */
export function deliveryFromRow(row: Record<string, unknown>, prefix: string): Delivery {
  // The row's columns are exactly deliveryColumns(source, prefix), each typed as DeliveryRow has it.
  const delivery = Object.fromEntries(
    Object.keys(deliveryColumnExpressions).map((name) => [name, row[`${prefix}${name}`]]),
  ) as unknown as DeliveryRow;
  return toDelivery(delivery);
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const cursorPattern = /^[1-9]\d{0,18}$/;

/** What a Delivery shows of a delivery's row. */
type DeliveryFields = Pick<
  DeliveryRow,
  | 'delivery_id'
  | 'event_id'
  | 'order_payment_id'
  | 'app_id'
  | 'client_id'
  | 'payment_status'
  | 'status'
  | 'attempts_made'
  | 'next_attempt_at'
  | 'created_at'
  | 'delivered_at'
  | 'last_error'
>;

function toDelivery(row: DeliveryFields): Delivery {
  return {
    delivery_id: row.delivery_id,
    event_id: row.event_id,
    order_payment_id: row.order_payment_id,
    app_id: row.app_id,
    client_id: row.client_id,
    payment_status: row.payment_status,
    status: row.status,
    attempts_made: row.attempts_made,
    next_attempt_at: isoOrNull(row.next_attempt_at),
    created_at: row.created_at.toISOString(),
    delivered_at: isoOrNull(row.delivered_at),
    last_error: row.last_error,
  };
}

/** A delivery as a transition writes it (ADR 0008): pending, due at `at`, nothing attempted yet. */
export function pendingDelivery(
  delivery: Pick<Delivery, 'delivery_id' | 'event_id' | 'order_payment_id' | 'app_id' | 'client_id' | 'payment_status'>,
  at: Date,
): Delivery {
  return toDelivery({
    ...delivery,
    status: 'pending',
    attempts_made: 0,
    next_attempt_at: at,
    created_at: at,
    delivered_at: null,
    last_error: null,
  });
}

function toClaimed(row: DeliveryRow): ClaimedDelivery {
  // The lease just taken counted this attempt (ADR 0037).
  const attempt = row.attempts_started ?? row.attempts_made + 1;
  return {
    delivery: toDelivery(row),
    body: row.body,
    attempt,
    lease_id: row.lease_id!,
    horizon_started_at: row.horizon_started_at.toISOString(),
    schedule_attempt: Math.max(1, attempt - (row.schedule_first_attempt ?? 1) + 1),
    // The lease statement wrote it as the last error when it counted the lost attempt; any
    // recorded attempt writes its own.
    follows_lost_attempt: row.last_error === lostAttemptError,
  };
}

function byDueTime(a: DeliveryRow, b: DeliveryRow): number {
  return a.next_attempt_at!.getTime() - b.next_attempt_at!.getTime();
}

function toAttempt(row: AttemptRow): DeliveryAttempt {
  return {
    attempt: row.attempt,
    started_at: row.started_at.toISOString(),
    duration_ms: row.duration_ms,
    outcome: row.outcome,
    ...(row.http_status === null ? {} : { http_status: row.http_status }),
    ...(row.error === null ? {} : { error: row.error }),
  };
}

/** The error recorded for an attempt whose outcome never was (ADR 0037). */
export const lostAttemptError =
  'no outcome recorded: the lease ended first (the instance making the attempt stopped or lost its database); the miniapp may or may not have received it';

/**
 * The CTEs that lease the deliveries `rows` selects (a subquery of delivery_ids) until `until`,
 * as `<name>` (it returns every column: select them with deliveryColumns). Taking a lease starts
 * an attempt and counts it (`attempts_started`, ADR 0037), so an attempt is numbered 1, 2, …
 * whatever happens to the instance making it. A delivery whose last lease ended without its
 * attempt recorded (the instance died) gets that attempt recorded now, failed with
 * lostAttemptError, before the new one is numbered after it. The guard repeats the lease
 * conditions and that no attempt started since the rows were read, so a delivery is never
 * leased twice. The claim and the slot hand-off both lease through this one statement part.
 * Every delivery a statement leases gets the statement's one lease id (`leaseId`, made here,
 * not by the database): should the statement's answer be lost with its connection, the leases
 * it may have committed are found by that id once the database is back (recoverLeases).
 */
function leaseSql(name: string, rows: string, p: { now: string; until: string; leaseId: string }): string {
  return `${name}_targets AS (
      SELECT d.delivery_id, COALESCE(d.attempts_started, d.attempts_made) AS started, d.attempts_made AS made,
        d.leased_at AS previous_leased_at, d.lease_until AS previous_lease_until
      FROM deliveries d WHERE d.delivery_id IN (${rows})
    ),
    ${name} AS (
      UPDATE deliveries d SET lease_id = ${p.leaseId}::uuid, lease_until = ${p.until}, leased_at = ${p.now},
        attempts_made = t.started, attempts_started = t.started + 1,
        last_error = CASE WHEN t.started > t.made THEN '${lostAttemptError}' ELSE d.last_error END
      FROM ${name}_targets t
      WHERE d.delivery_id = t.delivery_id AND COALESCE(d.attempts_started, d.attempts_made) = t.started
        AND d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until < ${p.now})
      RETURNING d.*, t.started > t.made AS lost_attempt, t.previous_leased_at, t.previous_lease_until
    ),
    ${name}_lost AS (
      INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, outcome, http_status, error)
      SELECT delivery_id, attempts_made, COALESCE(previous_leased_at, previous_lease_until, ${p.now}),
        GREATEST(0, floor(EXTRACT(EPOCH FROM (previous_lease_until - COALESCE(previous_leased_at, previous_lease_until))) * 1000))::int,
        'failed', NULL, '${lostAttemptError}'
      FROM ${name} WHERE lost_attempt
      ON CONFLICT (delivery_id, attempt) DO NOTHING
    )`;
}

/**
 * Attempts recorded together (ADR 0033): the attempts that end in one turn of the event loop, and
 * every one that ended while the previous statement ran, go in one statement (at most 1,024), one
 * statement at a time: under load one round trip and one commit serve many attempts, and alone an
 * attempt goes out at the end of the turn it ended in. A second statement in flight halved the
 * attempts per statement and cost more PostgreSQL CPU per callback than the wait it saved.
 */
export const e6RecordBatching: BatchOptions = { maxInFlight: 1, maxBatch: 1024, gatherTurn: true };

/**
 * Attempts in one statement (a statement is atomic), one array element per attempt: each
 * delivery's new state, guarded by its lease; each attempt's record, inserted only where the
 * guard matched; and the hand-off. An attempt asking for it ($11) passes its slot on: per
 * miniapp, as many of its oldest due, unleased deliveries are leased (until $12) as recorded
 * attempts held live leases (`held`, read in the statement's snapshot, before the UPDATE). A
 * miniapp's live leases therefore never grow here, which is why this needs no claim lock:
 * whatever a concurrent claim counted, this statement gave back at least what it took. Rows
 * another statement is leasing are skipped (SKIP LOCKED) and rows leased since the snapshot fail
 * the final guard, so a delivery is never leased twice. The statement's own attempts are never
 * their own successors. Successors are found through deliveries_due_by_app (migration 033), so
 * the cost is the miniapp's few leased rows, not the backlog ahead of them. Each attempt's row is
 * found by a seek on the primary key (`delivery_id >=` its id, in the key's order, LIMIT 1: no
 * other index gives that order, so any plan the connection kept reads one entry), its lease
 * judged on the row found, and updated by its ctid alone: joined with the input on delivery_id
 * and lease_id, a plan made on small tables hashed deliveries whole on every statement (ADR 0013).
 * Claims and hand-offs skip a delivery while its lease is live and a redelivery leaves it, so a
 * row whose ctid changed since the snapshot lost its lease, or was rewritten by a user's erasure:
 * recordDistinct sends the attempts this statement did not record once more to tell the two apart.
 */
const recordBatchStatement = {
  name: 'store.outbox.recordBatch',
  text: `WITH input AS (
      SELECT * FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::timestamptz[], $6::text[], $7::timestamptz[],
        $8::integer[], $9::text[], $10::integer[], $11::boolean[])
        AS i (delivery_id, lease_id, status, next_attempt_at, last_error, started_at, duration_ms, outcome, http_status, hand_off)
    ),
    leased AS (
      SELECT i.*, d.row_id, d.lease_until >= $1 AS live FROM input i
      CROSS JOIN LATERAL (SELECT d.ctid AS row_id, d.delivery_id, d.lease_id, d.lease_until FROM deliveries d
        WHERE d.delivery_id >= i.delivery_id ORDER BY d.delivery_id LIMIT 1) d
      WHERE d.delivery_id = i.delivery_id AND d.lease_id = i.lease_id
    ),
    held AS (
      SELECT delivery_id FROM leased WHERE live
    ),
    recorded AS (
      UPDATE deliveries d SET attempts_made = d.attempts_made + 1, status = i.status, next_attempt_at = i.next_attempt_at,
        delivered_at = CASE WHEN i.status = 'delivered' THEN $1::timestamptz END, last_error = i.last_error,
        lease_id = NULL, lease_until = NULL
      FROM leased i
      WHERE d.ctid = i.row_id
      RETURNING d.*, i.started_at AS attempt_started_at, i.duration_ms AS attempt_duration_ms, i.outcome AS attempt_outcome,
        i.http_status AS attempt_http_status, i.hand_off
    ),
    attempt AS (
      INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, outcome, http_status, error)
      SELECT delivery_id, attempts_made, attempt_started_at, attempt_duration_ms, attempt_outcome, attempt_http_status, last_error
      FROM recorded
    ),
    freed AS (
      SELECT r.app_id, count(*)::int AS slots FROM recorded r JOIN held h ON h.delivery_id = r.delivery_id
      WHERE r.hand_off
      GROUP BY r.app_id
    ),
    successors AS (
      SELECT s.delivery_id FROM freed f CROSS JOIN LATERAL (
        SELECT d.delivery_id FROM deliveries d
        WHERE d.app_id = f.app_id AND d.status = 'pending' AND d.next_attempt_at <= $1
          AND (d.lease_until IS NULL OR d.lease_until < $1) AND d.delivery_id <> ALL ($2::uuid[])
        ORDER BY d.next_attempt_at, d.seq
        LIMIT f.slots
        FOR UPDATE SKIP LOCKED
      ) s
    ),
    ${leaseSql('handed', 'SELECT delivery_id FROM successors', { now: '$1', until: '$12', leaseId: '$13' })}
    SELECT false AS handed, ${deliveryColumns('recorded')} FROM recorded
    UNION ALL
    SELECT true AS handed, ${deliveryColumns('handed')} FROM handed`,
};

interface RecordItem {
  record: AttemptRecord;
  handOff: HandOff | null;
}

/** Any fixed key: it only has to be the same for every claimer of this database. */
const claimLockStatement = { name: 'store.outbox.claimLock', text: 'SELECT pg_advisory_xact_lock(8008) AS locked' };

/**
 * Leases due deliveries, oldest first. A lease is held exactly while an attempt is in flight
 * (recordAttempt clears it), so the leases a miniapp holds now are its attempts in flight on all
 * instances; a miniapp gets at most $4 minus those ($4 null: no bound). Miniapps already at the
 * bound are skipped while scanning, so their backlog never hides another miniapp's deliveries;
 * at most $5 candidates are ranked, so the cost stays flat however long the backlog. The final
 * guard repeats the due condition so a row changed meanwhile (a redelivery) is re-checked.
 * Candidates a record statement holds (its hand-off locks successors FOR UPDATE) are skipped,
 * not waited for: a claim that waited on one while holding a row that statement was about to
 * record made the two deadlock (PostgreSQL broke it by failing one). Claims never wait on rows,
 * so there is no cycle; a skipped row is due again at the next claim.
 */
const claimStatement = {
  name: 'store.outbox.claimDue',
  text: `WITH in_flight AS (
      SELECT app_id, count(*)::int AS leased FROM deliveries
      WHERE lease_until >= $1 AND status = 'pending'
      GROUP BY app_id
    ),
    candidates AS (
      SELECT d.delivery_id, d.app_id, d.next_attempt_at, d.seq FROM deliveries d
      WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until < $1)
        AND ($4::integer IS NULL OR d.app_id NOT IN (SELECT app_id FROM in_flight WHERE leased >= $4::integer))
      ORDER BY d.next_attempt_at
      LIMIT $5
      FOR UPDATE OF d SKIP LOCKED
    ),
    ranked AS (
      SELECT c.delivery_id, c.next_attempt_at, coalesce(f.leased, 0) AS leased,
        row_number() OVER (PARTITION BY c.app_id ORDER BY c.next_attempt_at, c.seq) AS place
      FROM candidates c LEFT JOIN in_flight f ON f.app_id = c.app_id
    ),
    chosen AS (
      SELECT delivery_id FROM ranked
      WHERE $4::integer IS NULL OR leased + place <= $4::integer
      ORDER BY next_attempt_at
      LIMIT $3
    ),
    ${leaseSql('claimed', 'SELECT delivery_id FROM chosen', { now: '$1', until: '$2', leaseId: '$6' })}
    SELECT ${deliveryColumns('claimed')} FROM claimed`,
};

/** claimDue's due condition alone, on the index of pending deliveries by due time (deliveries_due). */
const anyDueStatement = {
  name: 'store.outbox.anyDue',
  text: `SELECT 1 AS due FROM deliveries
    WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < $1)
    LIMIT 1`,
};

export function createOutbox(db: Db, clock: Clock): Outbox {
  /**
   * The lease ids of statements whose answer was lost with the database (ADR 0037): each may have
   * committed leases nobody in this process knows of. recoverLeases finds them once it is back,
   * so their attempts start then rather than after the leases run out.
   */
  const uncertainLeases = new Set<string>();
  async function leasing<T>(leaseId: string, statement: () => Promise<T>): Promise<T> {
    try {
      return await statement();
    } catch (error) {
      if (error instanceof DatabaseUnavailableError) uncertainLeases.add(leaseId);
      throw error;
    }
  }

  /**
   * Records `items`, whose delivery_ids are distinct: one statement, and a second for those the
   * first did not record. The statement updates a row by the address it read (ADR 0013), and one
   * writer does change a leased delivery: a user's erasure strips its body. A record that waited
   * on that erasure finds the row moved and records nothing, as for a lost lease; the
   * acknowledged attempt would then be counted lost when the lease ends and the E6 sent again. The
   * second statement reads the row afresh; a lease truly lost (another claim's, or already
   * recorded) is refused by it as by the first. An erasure rewrites a row once, so once is enough.
   */
  async function recordDistinct(items: RecordItem[]): Promise<RecordedAttempt[]> {
    const results = await recordOnce(items);
    const again = items.flatMap((_, index) => (results[index]!.delivery === null ? [index] : []));
    if (again.length === 0) return results;
    const retried = await recordOnce(again.map((index) => items[index]!));
    again.forEach((index, position) => (results[index] = retried[position]!));
    return results;
  }

  /** One statement for `items`, whose delivery_ids are distinct. */
  async function recordOnce(items: RecordItem[]): Promise<RecordedAttempt[]> {
    const now = clock();
    const leaseId = randomUUID();
    const column = <T>(pick: (record: AttemptRecord) => T) => items.map(({ record }) => pick(record));
    const failed = (record: AttemptRecord) => (record.result.outcome === 'failed' ? record.result : undefined);
    const leases = items.flatMap(({ handOff }) => (handOff ? [handOff.leaseMs] : []));
    const shortestLease = leases.length > 0 ? Math.min(...leases) : undefined;
    const handsOff = items.some(({ handOff }) => handOff !== null);
    const send = () =>
      db.query<DeliveryRow & { handed: boolean }>(recordBatchStatement, [
        now,
        column((r) => r.delivery_id),
        column((r) => r.lease_id),
        column((r): DeliveryStatus => (!failed(r) ? 'delivered' : failed(r)!.retry_at ? 'pending' : 'dead')),
        column((r) => failed(r)?.retry_at ?? null),
        column((r) => failed(r)?.error ?? null),
        column((r) => r.started_at),
        column((r) => r.duration_ms),
        column((r) => r.result.outcome),
        column((r) => r.result.http_status ?? null),
        items.map(({ handOff }) => handOff !== null),
        // One lease end for the statement's successors: the shortest asked for.
        shortestLease === undefined ? null : addMs(now, shortestLease),
        leaseId,
      ]);
    const rows = handsOff ? await leasing(leaseId, send) : await send();
    const recorded = new Map(rows.filter((row) => !row.handed).map((row) => [row.delivery_id, row]));
    const results: RecordedAttempt[] = items.map(({ record }) => {
      const row = recorded.get(record.delivery_id);
      return { delivery: row ? toDelivery(row) : null, successors: [] };
    });
    // Each successor goes to an attempt of its miniapp that asked for a hand-off and was
    // recorded, one each in turn; all of them are handed out, so none waits for its lease to end.
    const takers = new Map<string, RecordedAttempt[]>();
    items.forEach(({ handOff }, index) => {
      const delivery = results[index]!.delivery;
      if (!handOff || !delivery) return;
      takers.set(delivery.app_id, [...(takers.get(delivery.app_id) ?? []), results[index]!]);
    });
    const handed = rows.filter((row) => row.handed).sort(byDueTime);
    handed.forEach((row, index) => {
      const candidates = takers.get(row.app_id)!;
      candidates[index % candidates.length]!.successors.push(toClaimed(row));
    });
    return results;
  }

  /** Records `items` in as few statements as their delivery_ids allow (one, unless one is given twice). */
  const recordAll = (items: RecordItem[]) => inRounds(items, ({ record }) => [record.delivery_id], recordDistinct);

  /**
   * Attempts are recorded through the store's batcher, gathering the turn (ADR 0033): the attempts
   * handed on together end together, and without gathering the first answer of a burst went out
   * alone and the rest waited for its statement.
   */
  const recordBatched = batched<RecordItem, RecordedAttempt>(recordAll, e6RecordBatching);

  return {
    async claimDue({ limit, leaseMs, maxInFlightPerMiniapp }) {
      const now = clock();
      // Claims from every instance take turns (a transaction-scoped advisory lock), so the count
      // of leases each miniapp holds cannot change between reading it and adding to it.
      const leaseId = randomUUID();
      const rows = await leasing(leaseId, () =>
        db.transaction(async (tx) => {
          await tx.query(claimLockStatement);
          // Enough candidates to fill the batch even when several miniapps each rank past their bound.
          const candidates = limit * (maxInFlightPerMiniapp ?? 1);
          return tx.query<DeliveryRow>(claimStatement, [
            now,
            addMs(now, leaseMs),
            limit,
            maxInFlightPerMiniapp ?? null,
            candidates,
            leaseId,
          ]);
        }),
      );
      return rows.sort(byDueTime).map(toClaimed);
    },

    async anyDue() {
      return (await db.query(anyDueStatement, [clock()])).length > 0;
    },

    async recoverLeases({ leaseMs }) {
      if (uncertainLeases.size === 0) return [];
      const leaseIds = [...uncertainLeases];
      const now = clock();
      // Renewed, not only read: the outage may have taken most of the lease, and a lease must
      // outlive the attempt it covers (ADR 0008). Left to end during the attempt it now starts,
      // the next claim would send the delivery again while this attempt was still open. A live
      // lease is this process's alone, so nothing else can have taken it meanwhile.
      const rows = await db.query<DeliveryRow>(
        `UPDATE deliveries SET lease_until = $3, leased_at = $2
         WHERE lease_id = ANY($1::uuid[]) AND lease_until > $2 AND status = 'pending'
         RETURNING ${deliveryColumns('deliveries')}`,
        [leaseIds, now, addMs(now, leaseMs)],
      );
      for (const leaseId of leaseIds) uncertainLeases.delete(leaseId);
      return rows.sort(byDueTime).map(toClaimed);
    },

    async recordAttempt(record) {
      return (await recordBatched({ record, handOff: null })).delivery;
    },

    recordAndHandOff(record, handOff) {
      return recordBatched({ record, handOff });
    },

    async list({ status, limit, cursor, appId, clientId, orderPaymentId }) {
      if (cursor !== undefined && !cursorPattern.test(cursor)) throw new InvalidCursorError(cursor);
      const rows = await db.query<DeliveryRow>(
        `SELECT ${deliveryColumns('deliveries')} FROM deliveries
         WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR seq < $2::bigint)
           AND ($4::text IS NULL OR app_id = $4) AND ($5::text IS NULL OR client_id = $5)
           AND ($6::text IS NULL OR order_payment_id = $6)
         ORDER BY deliveries.seq DESC -- the column, not the text alias of deliveryColumns ("10" < "9")
         LIMIT $3`,
        [status ?? null, cursor ?? null, limit + 1, appId ?? null, clientId ?? null, orderPaymentId ?? null],
      );
      const page = rows.slice(0, limit);
      return {
        deliveries: page.map(toDelivery),
        next_cursor: rows.length > limit ? page[page.length - 1]!.seq : null,
      };
    },

    async get(deliveryId) {
      if (!uuidPattern.test(deliveryId)) return null;
      // One snapshot for both reads: recordAttempt changes the row and adds its attempt together,
      // and on PostgreSQL two statements apart could see the attempt without the row's change.
      return db.transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const [row] = await tx.query<DeliveryRow>(`SELECT ${deliveryColumns('deliveries')} FROM deliveries WHERE delivery_id = $1`, [
          deliveryId,
        ]);
        if (!row) return null;
        const attempts = await tx.query<AttemptRow>(
          `SELECT attempt, started_at, duration_ms, outcome, http_status, error
         FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`,
          [deliveryId],
        );
        return { ...toDelivery(row), attempts: attempts.map(toAttempt) };
      });
    },

    async requeue(deliveryId, q = db) {
      if (!uuidPattern.test(deliveryId)) return null;
      const now = clock();
      // The guard is judged on the row as it is once locked, so a claim that leased it first is
      // seen. An expired lease is an attempt that crashed, not one in flight: cleared as before.
      const [queued] = await q.query<DeliveryRow>(
        `UPDATE deliveries SET status = 'pending',
           next_attempt_at = CASE WHEN status = 'pending' AND next_attempt_at <= $2 THEN next_attempt_at ELSE $2 END,
           horizon_started_at = $2, lease_id = NULL, lease_until = NULL,
           schedule_first_attempt = COALESCE(attempts_started, attempts_made) + 1
         WHERE delivery_id = $1 AND (lease_until IS NULL OR lease_until < $2)
         RETURNING ${deliveryColumns('deliveries')}`,
        [deliveryId, now],
      );
      if (queued) return { delivery: toDelivery(queued), coalesced: false };
      const [inFlight] = await q.query<DeliveryRow>(`SELECT ${deliveryColumns('deliveries')} FROM deliveries WHERE delivery_id = $1`, [
        deliveryId,
      ]);
      return inFlight ? { delivery: toDelivery(inFlight), coalesced: true } : null;
    },

    async countPending() {
      const [row] = await db.query<{ count: number }>("SELECT count(*)::int AS count FROM deliveries WHERE status = 'pending'");
      return row!.count;
    },
  };
}
