import { randomUUID } from 'node:crypto';
import { batched, e1WriteBatching } from './batch.js';
import { batchingFor, isUniqueViolation, type Db, type Queryable } from './db.js';
import { addMs, type Clock } from './time.js';

/** How long an Idempotency-Key is kept (D7); miniapp_order_id keys are kept for good. */
export const idempotencyKeyTtlMs = 24 * 60 * 60 * 1000;

/** What identifies one E1 request for idempotency (D7). */
export interface IdempotencyScope {
  app_id: string;
  client_id: string;
  miniapp_order_id: string | null;
  /** The Idempotency-Key header. */
  idempotency_key: string | null;
}

/** Keys a request holds while its E3 call runs; pass it to create (on success) or release. */
export interface Reservation {
  reservation_id: string;
  keys: string[];
}

export type ReserveResult =
  | { outcome: 'reserved'; reservation: Reservation }
  /** An earlier request with the same body completed: answer with its order payment. */
  | { outcome: 'done'; order_payment_id: string }
  /** The key was used with a different body. */
  | { outcome: 'conflict' }
  /** An earlier request with the same body is still waiting for the host app. */
  | { outcome: 'in_progress' };

export interface Idempotency {
  /**
   * Reserves every key of the request, all or none. A pending reservation older than the stale
   * threshold belongs to a process that died and is taken over; expired keys count as absent.
   */
  reserve(scope: IdempotencyScope, requestHash: string): Promise<ReserveResult>;
  /** Frees the keys after a failed E3 so a retry calls the host app again. */
  release(reservation: Reservation): Promise<void>;
  /** Deletes expired keys; returns how many. */
  purgeExpired(): Promise<number>;
}

interface IdempotencyKey {
  key: string;
  expires: boolean;
}

// Identifiers may contain ':'; percent-encoding keeps the key text unambiguous.
const part = encodeURIComponent;

export function idempotencyKeys(scope: IdempotencyScope): IdempotencyKey[] {
  const keys: IdempotencyKey[] = [];
  if (scope.miniapp_order_id !== null) {
    keys.push({
      key: `order:${part(scope.app_id)}:${part(scope.client_id)}:${part(scope.miniapp_order_id)}`,
      expires: false,
    });
  }
  if (scope.idempotency_key !== null) {
    keys.push({ key: `idem:${part(scope.app_id)}:${part(scope.idempotency_key)}`, expires: true });
  }
  // One global order, so two requests sharing keys lock them in the same order and cannot deadlock.
  return keys.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * The UPDATE that marks a reservation's keys done, for a data-modifying CTE in the statement that
 * creates the order payment; the arguments are the placeholders holding the key list (text[]),
 * the reservation_id and the order_payment_id. Keys taken over since (a stale reservation) stay.
 */
export function completeReservationSql(keys: string, reservationId: string, orderPaymentId: string): string {
  return `UPDATE idempotency_keys SET state = 'done', order_payment_id = ${orderPaymentId}
    WHERE key = ANY(${keys}::text[]) AND reservation_id = ${reservationId}::uuid AND state = 'pending'`;
}

/** What one key says about the request; the request's result combines its keys'. */
type KeyOutcome = Exclude<ReserveResult, { outcome: 'reserved' }> | { outcome: 'reserved' };

// Precedence when a request's keys disagree: a conflict on any key refuses the request; a
// completed key already holds the answer; otherwise a key still in use makes it wait.
const precedence: KeyOutcome['outcome'][] = ['conflict', 'done', 'in_progress', 'reserved'];

function decisive(outcomes: KeyOutcome[]): KeyOutcome {
  return outcomes.reduce<KeyOutcome>((best, next) => (precedence.indexOf(next.outcome) < precedence.indexOf(best.outcome) ? next : best), {
    outcome: 'reserved',
  });
}

/** Thrown inside the reservation transaction to roll back keys reserved before the refusal. */
class Refused extends Error {
  constructor(readonly result: ReserveResult) {
    super(result.outcome);
  }
}

interface KeyRow {
  key: string;
  request_hash: string;
  state: 'pending' | 'done';
  order_payment_id: string | null;
  reserved_at: Date;
  expires_at: Date | null;
}

const keyColumns = 'key, request_hash, state, order_payment_id, reserved_at, expires_at';

/**
 * The common case in one statement: when none of the request's keys exists, a plain multi-row
 * INSERT reserves them all (a unique violation, i.e. a key inserted concurrently, fails the whole
 * statement, so never some of them); when any exists, nothing is written and the existing rows
 * come back to decide on. PostgreSQL runs a statement outside BEGIN as its own transaction.
 */
const reserveOrReadStatement = {
  name: 'store.idempotency.reserveOrRead',
  text: `WITH existing AS (
      SELECT ${keyColumns} FROM idempotency_keys WHERE key = ANY($1::text[])
    ),
    inserted AS (
      INSERT INTO idempotency_keys (key, request_hash, state, reservation_id, reserved_at, expires_at)
      SELECT requested.key, $3::text, 'pending', $4::uuid, $5::timestamptz,
             CASE WHEN requested.expires THEN $6::timestamptz END
      FROM unnest($1::text[], $2::boolean[]) AS requested (key, expires)
      WHERE NOT EXISTS (SELECT 1 FROM existing)
      RETURNING key
    )
    SELECT false AS inserted, ${keyColumns} FROM existing
    UNION ALL
    SELECT true, key, NULL, NULL, NULL, NULL, NULL FROM inserted`,
};

/**
 * The usual E1 (one key, not yet in use) for many requests in one statement (issue 12): each
 * key absent at insert time is reserved; a key that exists, or that another row of the batch
 * took first, is skipped and its request decided on its own by the single-request path.
 */
const reserveBatchStatement = {
  name: 'store.idempotency.reserveBatch',
  text: `INSERT INTO idempotency_keys (key, request_hash, state, reservation_id, reserved_at, expires_at)
    SELECT key, request_hash, 'pending', reservation_id, reserved_at, expires_at
    FROM json_to_recordset($1::json)
      AS requested (key text, request_hash text, reservation_id uuid, reserved_at timestamptz, expires_at timestamptz)
    ON CONFLICT (key) DO NOTHING
    RETURNING reservation_id`,
};

interface SingleKeyReservation {
  key: string;
  requestHash: string;
  reservationId: string;
  now: Date;
  expiresAt: Date | null;
}

export function createIdempotency(db: Db, clock: Clock, staleAfterMs: number): Idempotency {
  // On PGlite one statement at a time, so that requests queue and share it (ADR 0032).
  const writeBatching = batchingFor(db, e1WriteBatching);
  /** True when the key was reserved; false sends the request down the single-request path. */
  const reserveSingleKey = batched<SingleKeyReservation, boolean>(async (items) => {
    // One JSON text of rows rather than five arrays the driver would escape element by element.
    const requested = items.map((item) => ({
      key: item.key,
      request_hash: item.requestHash,
      reservation_id: item.reservationId,
      reserved_at: item.now.toISOString(),
      expires_at: item.expiresAt?.toISOString() ?? null,
    }));
    const rows = await db.query<{ reservation_id: string }>(reserveBatchStatement, [JSON.stringify(requested)]);
    const reserved = new Set(rows.map((row) => row.reservation_id));
    return items.map((item) => reserved.has(item.reservationId));
  }, writeBatching);

  /** What an existing key means for a request with this hash; expired or abandoned keys are free. */
  function keyOutcome(existing: KeyRow, requestHash: string, now: Date): KeyOutcome {
    const expired = existing.expires_at !== null && existing.expires_at <= now;
    const abandoned = existing.state === 'pending' && existing.reserved_at.getTime() <= now.getTime() - staleAfterMs;
    if (expired || abandoned) return { outcome: 'reserved' };
    if (existing.request_hash !== requestHash) return { outcome: 'conflict' };
    if (existing.state === 'done') return { outcome: 'done', order_payment_id: existing.order_payment_id! };
    return { outcome: 'in_progress' };
  }

  function expiresAt(now: Date): Date {
    return addMs(now, idempotencyKeyTtlMs);
  }

  async function reserveKeyLocked(
    tx: Queryable,
    { key, expires }: IdempotencyKey,
    requestHash: string,
    reservationId: string,
    now: Date,
  ): Promise<KeyOutcome> {
    const values = [key, requestHash, reservationId, now, expires ? expiresAt(now) : null];
    const inserted = await tx.query(
      `INSERT INTO idempotency_keys (key, request_hash, state, reservation_id, reserved_at, expires_at)
       VALUES ($1, $2, 'pending', $3, $4, $5)
       ON CONFLICT (key) DO NOTHING
       RETURNING key`,
      values,
    );
    if (inserted.length > 0) return { outcome: 'reserved' };

    const [existing] = await tx.query<KeyRow>(`SELECT ${keyColumns} FROM idempotency_keys WHERE key = $1 FOR UPDATE`, [key]);
    const outcome = keyOutcome(existing!, requestHash, now);
    if (outcome.outcome === 'reserved') {
      await tx.query(
        `UPDATE idempotency_keys
         SET request_hash = $2, state = 'pending', reservation_id = $3, reserved_at = $4, expires_at = $5,
             order_payment_id = NULL
         WHERE key = $1`,
        values,
      );
    }
    return outcome;
  }

  /**
   * The general case, key by key under row locks in one transaction: takes over expired or
   * abandoned keys, and rolls back every key it reserved when another key refuses the request.
   */
  async function reserveLocked(keys: IdempotencyKey[], requestHash: string, reservation: Reservation, now: Date) {
    try {
      return await db.transaction(async (tx): Promise<ReserveResult> => {
        const outcomes: KeyOutcome[] = [];
        for (const key of keys) outcomes.push(await reserveKeyLocked(tx, key, requestHash, reservation.reservation_id, now));
        const result = decisive(outcomes);
        if (result.outcome !== 'reserved') throw new Refused(result);
        return { outcome: 'reserved', reservation };
      });
    } catch (error) {
      if (error instanceof Refused) return error.result;
      throw error;
    }
  }

  return {
    async reserve(scope, requestHash) {
      const keys = idempotencyKeys(scope);
      const reservation: Reservation = { reservation_id: randomUUID(), keys: keys.map(({ key }) => key) };
      if (keys.length === 0) return { outcome: 'reserved', reservation };
      const now = clock();
      // Two keys must be reserved all or none: those requests take the single-request path.
      if (keys.length === 1) {
        const [{ key, expires }] = keys as [IdempotencyKey];
        const single = { key, requestHash, reservationId: reservation.reservation_id, now, expiresAt: expires ? expiresAt(now) : null };
        if (await reserveSingleKey(single)) return { outcome: 'reserved', reservation };
      }

      let rows: (KeyRow & { inserted: boolean })[];
      try {
        rows = await db.query(reserveOrReadStatement, [
          reservation.keys,
          keys.map(({ expires }) => expires),
          requestHash,
          reservation.reservation_id,
          now,
          expiresAt(now),
        ]);
      } catch (error) {
        // A key appeared between the statement's snapshot and its insert: decide under locks.
        if (isUniqueViolation(error)) return reserveLocked(keys, requestHash, reservation, now);
        throw error;
      }
      if (rows.length > 0 && rows.every((row) => row.inserted)) return { outcome: 'reserved', reservation };

      // Keys absent from the snapshot, expired or abandoned would be free; a refusal needs no write.
      // Deciding in key order, as the locked path does, picks the same key among equals.
      const existing = reservation.keys.flatMap((key) => rows.filter((row) => row.key === key));
      const result = decisive(existing.map((row) => keyOutcome(row, requestHash, now)));
      if (result.outcome !== 'reserved') return result;
      return reserveLocked(keys, requestHash, reservation, now);
    },

    async release(reservation) {
      await db.query(`DELETE FROM idempotency_keys WHERE key = ANY($1::text[]) AND reservation_id = $2 AND state = 'pending'`, [
        reservation.keys,
        reservation.reservation_id,
      ]);
    },

    async purgeExpired() {
      const rows = await db.query('DELETE FROM idempotency_keys WHERE expires_at <= $1 RETURNING key', [clock()]);
      return rows.length;
    },
  };
}
