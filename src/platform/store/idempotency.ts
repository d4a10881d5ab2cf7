import { randomUUID } from 'node:crypto';
import { batched, e1WriteBatching, inRounds } from './batch.js';
import { batchingFor, type Db } from './db.js';
import { addMs, type Clock } from './time.js';

/**
 * How long an Idempotency-Key is kept by default (D7): the contract's `x-retention.idempotency_keys`
 * (ADR 0041) sets it; miniapp_order_id keys are kept as long as their payment.
 */
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

interface KeyRow {
  key: string;
  request_hash: string;
  state: 'pending' | 'done';
  order_payment_id: string | null;
}

/**
 * The one reservation statement, for every request of a batch (ADR 0007, 0021): each key is
 * inserted pending under its request's reservation, or, where it exists but is free (an
 * Idempotency-Key past its expiry, or a reservation pending past the stale window: its instance
 * stopped, ADR 0037), taken over. A key in use is left alone (ON CONFLICT … WHERE false locks
 * and keeps it). Only the keys this statement holds come back. A key appears in one request per
 * statement (ON CONFLICT cannot touch a row twice): the batch sends repeats in a later round.
 *
 * A key pending under the request's own reservation is its own: a statement that committed but
 * whose answer was lost (a dropped connection, a client-side time-out after the commit) leaves it
 * so, and the batch then sends each request again with the same reservation (batch.ts). Refused
 * there, the request would be told an E1 with its keys is waiting for the host app (itself) and
 * its keys would block every retry of the order until they went stale.
 */
const reserveStatement = {
  name: 'store.idempotency.reserve',
  text: `INSERT INTO idempotency_keys AS k (key, request_hash, state, reservation_id, reserved_at, expires_at)
    SELECT key, request_hash, 'pending', reservation_id, $2::timestamptz, expires_at
    FROM json_to_recordset($1::json) AS requested (key text, request_hash text, reservation_id uuid, expires_at timestamptz)
    ON CONFLICT (key) DO UPDATE SET request_hash = EXCLUDED.request_hash, state = 'pending',
      reservation_id = EXCLUDED.reservation_id, reserved_at = EXCLUDED.reserved_at, expires_at = EXCLUDED.expires_at,
      order_payment_id = NULL
    WHERE (k.expires_at IS NOT NULL AND k.expires_at <= $2)
      OR (k.state = 'pending' AND (k.reserved_at <= $3 OR k.reservation_id = EXCLUDED.reservation_id))
    RETURNING key, reservation_id::text`,
};

/** The rows of the keys a reservation did not get, to tell the request why. */
const readKeysStatement = {
  name: 'store.idempotency.readKeys',
  text: `SELECT key, request_hash, state, order_payment_id FROM idempotency_keys WHERE key = ANY($1::text[])`,
};

interface ReserveRequest {
  keys: IdempotencyKey[];
  requestHash: string;
  reservation: Reservation;
  now: Date;
}

export function createIdempotency(db: Db, clock: Clock, staleAfterMs: number, keyTtlMs = idempotencyKeyTtlMs): Idempotency {
  async function release(reservation: Reservation): Promise<void> {
    await db.query(`DELETE FROM idempotency_keys WHERE key = ANY($1::text[]) AND reservation_id = $2 AND state = 'pending'`, [
      reservation.keys,
      reservation.reservation_id,
    ]);
  }

  /** What an existing key says to a request with this hash; a free key (the row changed since) means retry. */
  function keyOutcome(existing: KeyRow | undefined, requestHash: string): KeyOutcome {
    if (!existing) return { outcome: 'in_progress' };
    if (existing.request_hash !== requestHash) return { outcome: 'conflict' };
    if (existing.state === 'done') return { outcome: 'done', order_payment_id: existing.order_payment_id! };
    return { outcome: 'in_progress' };
  }

  /** One round: requests whose keys are distinct across the round, in one statement. */
  async function reserveRound(requests: ReserveRequest[]): Promise<ReserveResult[]> {
    const now = requests[0]!.now;
    const rows = requests.flatMap(({ keys, requestHash, reservation }) =>
      keys.map(({ key, expires }) => ({
        key,
        request_hash: requestHash,
        reservation_id: reservation.reservation_id,
        expires_at: expires ? addMs(now, keyTtlMs).toISOString() : null,
      })),
    );
    const held = await db.query<{ key: string; reservation_id: string }>(reserveStatement, [
      JSON.stringify(rows),
      now,
      new Date(now.getTime() - staleAfterMs),
    ]);
    const heldBy = new Map(held.map((row) => [row.key, row.reservation_id]));
    const got = (request: ReserveRequest, key: string) => heldBy.get(key) === request.reservation.reservation_id;
    const refused = requests.filter((request) => !request.keys.every(({ key }) => got(request, key)));
    if (refused.length === 0) return requests.map(({ reservation }) => ({ outcome: 'reserved', reservation }));
    // All or none: a request that got only some of its keys gives them back.
    const partial = refused.filter((request) => request.keys.some(({ key }) => got(request, key)));
    await Promise.all(partial.map((request) => release(request.reservation)));
    const missing = refused.flatMap((request) => request.keys.filter(({ key }) => !got(request, key)).map(({ key }) => key));
    const existing = new Map((await db.query<KeyRow>(readKeysStatement, [missing])).map((row) => [row.key, row]));
    return requests.map((request): ReserveResult => {
      if (!refused.includes(request)) return { outcome: 'reserved', reservation: request.reservation };
      const outcome = decisive(
        request.keys.filter(({ key }) => !got(request, key)).map(({ key }) => keyOutcome(existing.get(key), request.requestHash)),
      );
      // A key freed between the two statements: the request tries again like any retry would.
      return outcome.outcome === 'reserved' ? { outcome: 'in_progress' } : outcome;
    });
  }

  /** Rounds of requests whose keys are distinct, one statement each (usually one round). */
  const reserveAll = (requests: ReserveRequest[]) => inRounds(requests, ({ keys }) => keys.map(({ key }) => key), reserveRound);

  // On PGlite one statement at a time, so that requests queue and share it (ADR 0032).
  const reserveBatched = batched(reserveAll, batchingFor(db, e1WriteBatching));

  return {
    reserve(scope, requestHash) {
      const keys = idempotencyKeys(scope);
      const reservation: Reservation = { reservation_id: randomUUID(), keys: keys.map(({ key }) => key) };
      if (keys.length === 0) return Promise.resolve({ outcome: 'reserved', reservation });
      return reserveBatched({ keys, requestHash, reservation, now: clock() });
    },

    release,

    async purgeExpired() {
      const rows = await db.query('DELETE FROM idempotency_keys WHERE expires_at <= $1 RETURNING key', [clock()]);
      return rows.length;
    },
  };
}
