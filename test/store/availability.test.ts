import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  createAvailability,
  DatabaseUnavailableError,
  databaseBackoff,
  isUnavailable,
} from '../../src/platform/store/availability.js';

/** A probe the test answers by hand: each call waits until the test says how it went. */
function manualProbe() {
  const calls: Array<{ succeed(): void; fail(): void }> = [];
  let waiting: (() => void) | undefined;
  return {
    calls,
    probe: () =>
      new Promise<void>((resolve, reject) => {
        calls.push({ succeed: resolve, fail: () => reject(new Error('connect ECONNREFUSED')) });
        waiting?.();
      }),
    /** Resolves once the probe has been called `count` times in all. */
    async called(count: number): Promise<void> {
      while (calls.length < count) await new Promise<void>((resolve) => (waiting = resolve));
    },
  };
}

// Jitter of zero: the back-off waits nothing, so the test never waits on real time.
const noWait = { firstMs: 100, capMs: 5_000, random: () => 0 };

describe('database availability (ADR 0037)', () => {
  it('tells statement errors from a database that cannot be reached or written', () => {
    for (const unavailable of [
      { code: '57P01', message: 'terminating connection due to administrator command' },
      { code: '57P03', message: 'the database system is starting up' },
      { code: '08006', message: 'connection failure' },
      { code: '53300', message: 'sorry, too many clients already' },
      { code: '53100', message: 'could not extend file: No space left on device' },
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' },
      { code: 'ECONNRESET', message: 'read ECONNRESET' },
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
      new Error('PGlite is closed'),
      new DatabaseUnavailableError(),
    ])
      expect(isUnavailable(unavailable), JSON.stringify(unavailable) || String(unavailable)).toBe(true);
    for (const statementError of [
      { code: '23505', message: 'duplicate key value violates unique constraint' },
      { code: '42P01', message: 'relation "x" does not exist' },
      { code: '40P01', message: 'deadlock detected' },
      new Error('syntax error'),
      'a string',
      null,
      undefined,
    ])
      expect(isUnavailable(statementError), String(statementError)).toBe(false);
  });

  it('backs off exponentially with full jitter, capped', () => {
    const top = { ...databaseBackoff, random: () => 0.999999 };
    const ceilings = Array.from({ length: 10 }, (_, attempt) => backoffDelay(top, attempt));
    expect(ceilings).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000]);
    expect(backoffDelay({ ...databaseBackoff, random: () => 0 }, 7)).toBe(0);
    expect(backoffDelay({ ...databaseBackoff, random: () => 0.5 }, 3)).toBe(400);
    // Past 2^30 the exponent stops growing: no Infinity, no NaN.
    expect(backoffDelay(top, 5_000)).toBe(5000);
  });

  it('probes once however many statements fail, is down while the probe fails, and up when it succeeds', async () => {
    const probe = manualProbe();
    const changes: boolean[] = [];
    const availability = createAvailability({ probe: probe.probe, backoff: noWait, onChange: (up) => changes.push(up) });
    expect(availability.up).toBe(true);
    for (let index = 0; index < 50; index++) availability.suspect(new Error('Connection terminated unexpectedly'));
    await probe.called(1);
    expect(probe.calls).toHaveLength(1);
    // A lone terminated connection: the probe answers, nothing changes.
    probe.calls[0]!.succeed();
    await new Promise((resolve) => setImmediate(resolve));
    expect(availability.up).toBe(true);
    expect(changes).toEqual([]);

    // An outage: the probe fails, the database is down until a probe succeeds; still one probe at a time.
    availability.suspect(new Error('connect ECONNREFUSED'));
    await probe.called(2);
    const backUp = availability.whenUp();
    probe.calls[1]!.fail();
    await probe.called(3);
    expect(availability.up).toBe(false);
    for (let index = 0; index < 50; index++) availability.suspect(new Error('connect ECONNREFUSED'));
    probe.calls[2]!.fail();
    await probe.called(4);
    expect(probe.calls).toHaveLength(4);
    probe.calls[3]!.succeed();
    await backUp;
    expect(availability.up).toBe(true);
    expect(changes).toEqual([false, true]);
    availability.close();
  });

  it('whenUp resolves at once when up, and rejects when its signal aborts', async () => {
    const probe = manualProbe();
    const availability = createAvailability({ probe: probe.probe, backoff: noWait });
    await expect(availability.whenUp()).resolves.toBeUndefined();
    availability.suspect(new Error('connect ECONNREFUSED'));
    await probe.called(1);
    probe.calls[0]!.fail();
    await probe.called(2);
    const stop = new AbortController();
    const waiting = availability.whenUp(stop.signal);
    stop.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow('stopping');
    availability.close();
    probe.calls[1]!.fail();
  });

  it('stops probing once closed', async () => {
    const probe = manualProbe();
    const availability = createAvailability({ probe: probe.probe, backoff: noWait });
    availability.suspect(new Error('connect ECONNREFUSED'));
    await probe.called(1);
    availability.close();
    probe.calls[0]!.fail();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(probe.calls).toHaveLength(1);
    availability.suspect(new Error('connect ECONNREFUSED'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(probe.calls).toHaveLength(1);
  });
});
