import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Whether this process can reach its database, and the one way it waits to reach it again
 * (ADR 0037). Every statement that fails because its connection did reports it here; one probe at
 * a time then asks the database, at once and then on a capped, jittered exponential back-off,
 * until it answers. While a probe fails the database is `down`: statements are refused at once
 * (DatabaseUnavailableError) instead of each opening a connection of its own, so an outage never
 * becomes a connection storm, and the background loops wait for `up` instead of polling.
 */

/** A statement refused or failed because the database cannot be reached (or cannot write): retry later. */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  constructor(message = 'the database is unavailable', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * SQLSTATEs that say the connection or the server failed rather than the statement: class 08
 * (connection exception), 57P01-57P05 (the server shutting down, crashed, starting, idle
 * session ended), 53300 (too many connections), 53100 (disk full: nothing can be written until an
 * operator frees space).
 */
const unavailableStates = /^(08...|57P0[1-5]|53[13]00)$/;

/** Node socket errors of a connection that cannot be made or was cut. */
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * pg and PGlite report a lost connection in messages without a code: a connection the server
 * closed, a connect or checkout past its time-out, a statement past its time-out (the connection
 * is then destroyed), a client used after its connection failed, a closed PGlite.
 */
const unavailableMessages =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|Client was closed|PGlite is closed|Cannot use a pool after calling end/;

/** True when `error` says the database could not be reached or written, not that the statement was wrong. */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (unavailableStates.test(code) || socketCodes.has(code))) return true;
  return typeof message === 'string' && unavailableMessages.test(message);
}

/** A capped exponential back-off with full jitter: the n-th wait is uniform in [0, min(cap, first * 2^n)]. */
export interface Backoff {
  firstMs: number;
  capMs: number;
  random?: () => number;
}

/** Reconnection pacing for every database connection (ADR 0037). */
export const databaseBackoff: Backoff = { firstMs: 100, capMs: 5_000 };

export function backoffDelay(backoff: Backoff, attempt: number): number {
  const ceiling = Math.min(backoff.capMs, backoff.firstMs * 2 ** Math.min(attempt, 30));
  return Math.round((backoff.random ?? Math.random)() * ceiling);
}

export type AvailabilityListener = (up: boolean) => void;

export interface Availability {
  /** False from a failed probe until a probe succeeds. */
  readonly up: boolean;
  /** A statement failed in a way `isUnavailable` recognises: probe the database (one probe at a time). */
  suspect(error: unknown): void;
  /** Called with false when the database goes down and true when it is back; returns the unsubscribe. */
  onChange(listener: AvailabilityListener): () => void;
  /** Resolves when the database is up (at once if it is); rejects when `signal` aborts. */
  whenUp(signal?: AbortSignal): Promise<void>;
  /** Stops probing (the database is being closed). */
  close(): void;
}

export interface AvailabilityOptions {
  /** One round trip to the database; rejects when it cannot answer. */
  probe(): Promise<void>;
  backoff?: Backoff;
  /** Told each change, for the log and the metrics. */
  onChange?: AvailabilityListener;
}

export function createAvailability(options: AvailabilityOptions): Availability {
  const backoff = options.backoff ?? databaseBackoff;
  const listeners = new Set<AvailabilityListener>();
  if (options.onChange) listeners.add(options.onChange);
  const stop = new AbortController();
  let up = true;
  let probing: Promise<void> | undefined;

  const set = (next: boolean) => {
    if (next === up) return;
    up = next;
    for (const listener of [...listeners]) {
      try {
        listener(next);
      } catch {
        // A listener's failure must not stop the others from hearing of the change.
      }
    }
  };

  async function probeUntilUp(): Promise<void> {
    for (let attempt = 0; !stop.signal.aborted; attempt++) {
      try {
        await options.probe();
        set(true);
        return;
      } catch {
        if (stop.signal.aborted) return;
        set(false);
      }
      await sleep(backoffDelay(backoff, attempt), undefined, { signal: stop.signal }).catch(() => undefined);
    }
  }

  const onChange = (listener: AvailabilityListener) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };

  return {
    get up() {
      return up;
    },
    suspect() {
      if (probing || stop.signal.aborted) return;
      probing = probeUntilUp().finally(() => (probing = undefined));
    },
    onChange,
    whenUp(signal) {
      if (up) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const done = (error?: unknown) => {
          unsubscribe();
          signal?.removeEventListener('abort', aborted);
          if (error === undefined) resolve();
          else reject(error);
        };
        const aborted = () => done(signal!.reason ?? new Error('aborted'));
        const unsubscribe = onChange((now) => now && done());
        if (signal?.aborted) return aborted();
        signal?.addEventListener('abort', aborted, { once: true });
      });
    },
    close() {
      stop.abort();
    },
  };
}
