/**
 * The PGlite template cluster (ADR 0021, ADR 0026): a fresh data directory is a copy of a template
 * that already holds the migrations, the template's name changes with the migration files, and a
 * directory made from an older template is brought up to date by the migration runner, and a
 * `memory://` database loads the same template, archived.
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/platform/store/index.js';
import { defaultMigrationsDir, loadMigrations } from '../../src/platform/store/migrate.js';
import { ensurePgliteTemplate, pgliteTemplateDir, preparePgliteDataDir } from '../../src/platform/store/pgliteCluster.js';

// initdb runs once or twice in a child: tens of seconds on a busy 2-core machine.
const templateTimeoutMs = 300_000;

describe('PGlite template cluster', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(os.tmpdir(), 'minibridge-template-'));
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it('is named by the migrations it holds: one more or one changed names another template', async () => {
    const migrations = await loadMigrations();
    const cacheDir = join(scratch, 'names');
    const current = pgliteTemplateDir(migrations, cacheDir);
    expect(pgliteTemplateDir(await loadMigrations(), cacheDir)).toBe(current);
    const added = [...migrations, { version: '999', name: '999_more.sql', sql: 'SELECT 1;' }];
    expect(pgliteTemplateDir(added, cacheDir)).not.toBe(current);
    const changed = migrations.map((m, i) => (i === 0 ? { ...m, sql: `${m.sql}\n-- edited` } : m));
    expect(pgliteTemplateDir(changed, cacheDir)).not.toBe(current);
  });

  it(
    'a fresh directory holds every migration; one made from an older template gets the rest at start',
    async () => {
      // An older template: the first migration only, in a cache of this test's own.
      const olderMigrations = join(scratch, 'older-migrations');
      const all = await loadMigrations();
      await cp(defaultMigrationsDir, olderMigrations, { recursive: true });
      for (const file of (await readdir(olderMigrations)).filter((f) => f !== all[0]!.name)) await rm(join(olderMigrations, file));
      const cacheDir = join(scratch, 'cache');
      const olderTemplate = await ensurePgliteTemplate({ migrationsDir: olderMigrations, cacheDir });
      expect(olderTemplate).toBe(pgliteTemplateDir(all.slice(0, 1), cacheDir));

      const fromOlder = join(scratch, 'from-older');
      await preparePgliteDataDir(fromOlder, { migrationsDir: olderMigrations, cacheDir });
      const versions = async (dataDir: string) => {
        const store = await openStore({ pgliteDataDir: dataDir });
        try {
          return (await store.db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).map(
            (r) => r.version,
          );
        } finally {
          await store.close();
        }
      };
      // openStore migrates: the directory from the older template ends with every migration.
      expect(await versions(fromOlder)).toEqual(all.map((m) => m.version));

      // The current migrations name another template (the one `npm install` made, shared by every
      // start); a fresh directory copied from it needs no migration.
      expect(pgliteTemplateDir(all, cacheDir)).not.toBe(olderTemplate);
      const fresh = join(scratch, 'fresh');
      await preparePgliteDataDir(fresh);
      const { createPglite } = await import('../../src/platform/store/db.js');
      const pglite = await createPglite(fresh);
      try {
        const { rows } = await pglite.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
        expect(rows.map((r) => r.version)).toEqual(all.map((m) => m.version));
      } finally {
        await pglite.close();
      }
    },
    templateTimeoutMs,
  );

  it(
    'a memory:// database starts from the archived template: every migration there before the runner runs, and its own data its own',
    async () => {
      const all = await loadMigrations();
      const { openPglite } = await import('../../src/platform/store/db.js');
      const [first, second] = [await openPglite('memory://'), await openPglite('memory://')];
      try {
        const versions = (await first.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).map(
          (r) => r.version,
        );
        expect(versions).toEqual(all.map((m) => m.version));
        await first.exec('CREATE TABLE only_in_first (id int)');
        expect(await second.query(`SELECT 1 FROM pg_tables WHERE tablename = 'only_in_first'`)).toEqual([]);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    },
    templateTimeoutMs,
  );
});
