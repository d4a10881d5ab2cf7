import { expect, it } from 'vitest';
import { createStore } from '../../src/platform/store/index.js';
import { REPLAY_PURGE_GRACE_MS } from '../../src/platform/store/replayGuard.js';
import { describeEachBackend } from '../support/databases.js';
import { manualClock, seconds } from './fixtures.js';

describeEachBackend('replay guard', (database) => {
  const clock = manualClock();

  const count = async () => (await database.db.query<{ count: number }>('SELECT count(*)::int AS count FROM replay_guard'))[0]!.count;

  it('accepts a signature once until it expires, then again', async () => {
    const store = createStore(database.db, { clock: clock.now });
    const expiresAt = new Date(clock.now().getTime() + seconds(600));
    expect(await store.replayGuard.remember('sig-1', expiresAt)).toBe(true);
    expect(await store.replayGuard.remember('sig-1', expiresAt)).toBe(false);
    expect(await store.replayGuard.remember('sig-2', expiresAt)).toBe(true);

    clock.advance(seconds(600));
    expect(await store.replayGuard.remember('sig-1', new Date(clock.now().getTime() + seconds(600)))).toBe(true);
    expect(await store.replayGuard.remember('sig-1', new Date(clock.now().getTime() + seconds(600)))).toBe(false);
  });

  it('purges expired signatures on demand and on one call in N', async () => {
    const store = createStore(database.db, { clock: clock.now, replayPurgeEvery: 3 });
    const soon = new Date(clock.now().getTime() + seconds(1));
    const later = new Date(clock.now().getTime() + seconds(600));
    await store.replayGuard.remember('a', soon);
    await store.replayGuard.remember('b', later);
    clock.advance(seconds(1) + REPLAY_PURGE_GRACE_MS);
    expect(await count()).toBe(2);

    await store.replayGuard.remember('c', later);
    expect(await count()).toBe(2);
    expect(await store.replayGuard.purgeExpired()).toBe(0);

    clock.advance(seconds(600));
    expect(await store.replayGuard.purgeExpired()).toBe(2);
    expect(await count()).toBe(0);
  });

  it('keeps a key past its expiry for an instance whose clock lags: a purge ahead of it hands it no replay (ADR 0038)', async () => {
    const ahead = createStore(database.db, { clock: clock.now });
    const lagMs = seconds(30);
    const lagging = createStore(database.db, { clock: () => new Date(clock.now().getTime() - lagMs) });
    const expiresAt = new Date(clock.now().getTime() + seconds(10));
    expect(await ahead.replayGuard.remember('edge', expiresAt)).toBe(true);
    // Past the expiry on the clock ahead, not yet on the lagging one.
    clock.advance(seconds(10) + lagMs / 2);
    expect(await ahead.replayGuard.purgeExpired()).toBe(0);
    expect(await lagging.replayGuard.remember('edge', expiresAt)).toBe(false);
    // Once past on every clock within the grace, it goes.
    clock.advance(REPLAY_PURGE_GRACE_MS);
    expect(await ahead.replayGuard.purgeExpired()).toBe(1);
  });
});
