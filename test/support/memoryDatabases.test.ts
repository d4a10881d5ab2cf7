import { describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/store/db.js';
import { recycling } from './memoryDatabases.js';

// The suites' recycled memory:// databases (ADR 0044; installed for every file by test/support/setup.ts):
// what one test leaves behind is never seen by the next.

describe('recycled memory:// databases', () => {
  it('a database given back is lent again emptied: rows gone, sequences restarted, the template rows back', async () => {
    const first = await openPglite('memory://');
    const [{ count: migrations }] = await first.query<{ count: number }>('SELECT count(*)::int AS count FROM schema_migrations');
    await first.exec(
      `INSERT INTO audit_entries (audit_id, at, actor_type, action, partner_type, partner_id, changes)
       VALUES (gen_random_uuid(), now(), 'operator', 'test', 'miniapp', 'ma_1', '{}')`,
    );
    await first.exec(`UPDATE statement_progress SET closed_through = DATE '2026-01-01'`);
    await first.exec('SET TIME ZONE 5');
    const before = { ...recycling };
    await first.close();
    const second = await openPglite('memory://');
    try {
      expect(recycling.recycled).toBe(before.recycled + 1);
      expect(recycling.booted).toBe(before.booted);
      expect(await second.query('SELECT closed_through FROM statement_progress')).toEqual([{ closed_through: null }]);
      expect(await second.query<{ count: number }>('SELECT count(*)::int AS count FROM schema_migrations')).toEqual([
        { count: migrations },
      ]);
      expect(await second.query<{ count: number }>('SELECT count(*)::int AS count FROM audit_entries')).toEqual([{ count: 0 }]);
      // The sequence starts over: the first row of the next borrower is seq 1, as on a fresh database.
      await second.exec(
        `INSERT INTO audit_entries (audit_id, at, actor_type, action, partner_type, partner_id, changes)
         VALUES (gen_random_uuid(), now(), 'operator', 'test', 'miniapp', 'ma_1', '{}')`,
      );
      expect(await second.query('SELECT seq::int AS seq FROM audit_entries')).toEqual([{ seq: 1 }]);
      expect(await second.query('SHOW TIME ZONE')).not.toEqual([{ TimeZone: '5' }]);
    } finally {
      await second.close();
    }
  });

  it('the handle of a closed loan fails as a closed PGlite does, even while the database serves the next borrower', async () => {
    const first = await openPglite('memory://');
    await first.close();
    const second = await openPglite('memory://');
    try {
      await expect(first.query('SELECT 1')).rejects.toThrow();
      expect(await second.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await second.close();
    }
  });

  it('a database whose schema a test changed is closed, never lent again', async () => {
    const changed = await openPglite('memory://');
    await changed.exec('CREATE TABLE only_here (id int)');
    const before = { ...recycling };
    await changed.close();
    expect(recycling.dropped).toBe(before.dropped + 1);
    const next = await openPglite('memory://');
    try {
      expect(await next.query(`SELECT 1 FROM pg_tables WHERE tablename = 'only_here'`)).toEqual([]);
    } finally {
      await next.close();
    }
  });

  it('a database left in an open transaction is rolled back before it is lent again', async () => {
    const first = await openPglite('memory://');
    await first.exec(`BEGIN; UPDATE statement_progress SET closed_through = DATE '2026-01-02'`);
    await first.close();
    const second = await openPglite('memory://');
    try {
      expect(await second.query('SELECT closed_through FROM statement_progress')).toEqual([{ closed_through: null }]);
      await second.exec('BEGIN; COMMIT');
    } finally {
      await second.close();
    }
  });
});
