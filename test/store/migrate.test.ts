import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultMigrationsDir, loadMigrations, migrate } from '../../src/platform/store/migrate.js';
import { createStore } from '../../src/platform/store/index.js';
import { backends, openTimeoutMs, type TestDatabase } from '../support/databases.js';

for (const backend of backends) {
  describe.skipIf(backend.skip)(`migrations (${backend.name})`, { timeout: openTimeoutMs }, () => {
    let database: TestDatabase | undefined;
    afterEach(async () => {
      await database?.dispose();
      database = undefined;
    }, openTimeoutMs);

    it('applies every migration once and nothing on a second run', async () => {
      database = await backend.open({ migrate: false });
      const all = (await loadMigrations()).map((m) => m.version);
      expect(all.length).toBeGreaterThan(0);

      expect(await migrate(database.db)).toEqual(all);
      expect(await migrate(database.db)).toEqual([]);
      const recorded = await database.db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(recorded.map((r) => r.version)).toEqual(all);
    });

    it('lets two runners start at once: one applies, the other finds it done', async () => {
      database = await backend.open({ migrate: false });
      const [first, second] = [await database.connect(), await database.connect()];
      const results = await Promise.all([migrate(first), migrate(second)]);

      const all = (await loadMigrations()).map((m) => m.version);
      expect(results.flat().sort()).toEqual(all);
      expect(results.some((applied) => applied.length === 0)).toBe(true);
    });

    it('a partner’s own loopback URL, recorded as an exception by a sandbox before ADR 0043 said otherwise, leaves internal_urls; an operator’s stays', async () => {
      database = await backend.open({ migrate: false });
      const before = await mkdtemp(join(tmpdir(), 'minibridge-migrations-'));
      try {
        for (const file of await readdir(defaultMigrationsDir))
          if (file < '093_') await copyFile(join(defaultMigrationsDir, file), join(before, file));
        await migrate(database.db, before);
      } finally {
        await rm(before, { recursive: true, force: true });
      }
      const partner = async (id: string, internal: string[]) =>
        database!.db.query(
          `INSERT INTO partners (partner_type, partner_id, settings, created_at, updated_at) VALUES ('hostapp', $1, $2, now(), now())`,
          [id, JSON.stringify({ name: id, urls: {}, internal_urls: internal })],
        );
      const audit = async (id: string, actor: string, field: string, seq: number) =>
        database!.db.query(
          `INSERT INTO audit_entries (seq, audit_id, at, actor_type, actor_id, action, partner_type, partner_id, changes)
           VALUES ($1, gen_random_uuid(), now(), $2, NULL, 'update', 'hostapps', $3, $4)`,
          [seq, actor, id, JSON.stringify([{ field, before: null, after: '"http://127.0.0.1:4000/x"' }])],
        );
      await partner('ha_mixed', ['create_order_payment', 'events', 'get_payment_status']);
      await audit('ha_mixed', 'operator', 'urls.create_order_payment', 1);
      await audit('ha_mixed', 'hostapp', 'urls.create_order_payment', 2);
      await audit('ha_mixed', 'hostapp', 'urls.events', 3);
      await audit('ha_mixed', 'operator', 'urls.events', 4);
      await audit('ha_mixed', 'import', 'urls.get_payment_status', 5);
      await partner('ha_sandboxed', ['create_order_payment']);
      await audit('ha_sandboxed', 'hostapp', 'urls.create_order_payment', 6);

      expect(await migrate(database.db)).toContain('093');
      const settings = await database.db.query<{ partner_id: string; settings: { internal_urls?: string[] } }>(
        'SELECT partner_id, settings FROM partners ORDER BY partner_id',
      );
      expect(settings.map((row) => [row.partner_id, row.settings.internal_urls])).toEqual([
        ['ha_mixed', ['events', 'get_payment_status']],
        ['ha_sandboxed', undefined],
      ]);
    });

    it('answers ping once migrated', async () => {
      database = await backend.open();
      await expect(createStore(database.db).ping()).resolves.toBeUndefined();
    });
  });
}
