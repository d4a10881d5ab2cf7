import type { Db, PreparedStatement, Queryable } from '../../src/platform/store/db.js';

/**
 * A Db that records what the store sends, one label per round trip: a prepared statement's
 * name, the first word of other SQL, BEGIN and COMMIT around a transaction (PostgreSQL sends
 * both). `before` runs before a named statement is sent, e.g. to make a concurrent write land
 * between two statements of an operation.
 */
export function recordingDb(db: Db) {
  const sent: string[] = [];
  const before = new Map<string, () => Promise<void>>();
  const label = (sql: string | PreparedStatement) => (typeof sql === 'string' ? sql.trim().split(/\s/)[0]! : sql.name);

  async function send<T>(target: Queryable, sql: string | PreparedStatement, params?: readonly unknown[]): Promise<T[]> {
    const name = label(sql);
    sent.push(name);
    const hook = typeof sql === 'string' ? undefined : before.get(name);
    if (hook) {
      before.delete(name);
      await hook();
    }
    return target.query<T>(sql, params);
  }

  const recording: Db = {
    ...db,
    query: (sql, params) => send(db, sql, params),
    async transaction(fn) {
      sent.push('BEGIN');
      try {
        return await db.transaction((tx) => fn({ ...tx, query: (sql, params) => send(tx, sql, params) }));
      } finally {
        sent.push('COMMIT');
      }
    },
  };
  return {
    db: recording,
    /** Labels of everything sent since the last call, then forgets them. */
    take(): string[] {
      return sent.splice(0);
    },
    /** Runs fn once, just before the next statement with this name is sent. */
    before(name: string, fn: () => Promise<void>) {
      before.set(name, fn);
    },
  };
}
