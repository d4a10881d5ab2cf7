import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/platform/store/migrate.js';
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

    it('answers ping once migrated', async () => {
      database = await backend.open();
      await expect(createStore(database.db).ping()).resolves.toBeUndefined();
    });
  });
}
