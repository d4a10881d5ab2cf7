import { setTimeout as sleep } from 'node:timers/promises';
import type { Db, Queryable } from '../../src/platform/store/db.js';

/**
 * PostgreSQL only: makes `contender` run into a write that is not committed yet. `write` runs in
 * a transaction on `holder`; the contender starts, and the transaction commits once the
 * contender waits on its locks (seen through `observer`, a third connection).
 */
export async function raceAgainstUncommitted<T>(
  holder: Db,
  observer: Db,
  write: (tx: Queryable) => Promise<void>,
  contender: () => Promise<T>,
): Promise<T> {
  let running: Promise<T> | undefined;
  let settled = false;
  await holder.transaction(async (tx) => {
    await write(tx);
    const [self] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    running = contender();
    running.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (;;) {
      const [blocked] = await observer.query<{ count: number }>(
        'SELECT count(*)::int AS count FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))',
        [self!.pid],
      );
      if (blocked!.count > 0) return;
      if (settled) throw new Error('the contender finished without waiting for the uncommitted write');
      await sleep(5);
    }
  });
  return running!;
}
