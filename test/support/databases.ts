import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import { createPglite, openPglite, openPostgres, pgliteDb, quoteIdentifier, type Db } from '../../src/platform/store/db.js';
import { migrate } from '../../src/platform/store/migrate.js';

/** A database for one test file (or describe block), isolated from every other. */
export interface TestDatabase {
  /** Migrated unless opened with { migrate: false }. */
  db: Db;
  /** Another connection pool to the same data (PostgreSQL); PGlite has one session and shares it. */
  connect(): Promise<Db>;
  /** Empties every table the migrations created. */
  truncate(): Promise<void>;
  /** Closes every connection; on PostgreSQL also drops the schema. */
  dispose(): Promise<void>;
}

export interface TestBackend {
  name: 'pglite' | 'postgres';
  /** True when the backend is not available here (PostgreSQL without DATABASE_URL). */
  skip: boolean;
  open(options?: { migrate?: boolean }): Promise<TestDatabase>;
}

const databaseUrl = process.env.DATABASE_URL;

/**
 * Timeout for a hook or test that opens a database: starting PGlite (WASM) takes seconds and
 * far longer on a busy machine than vitest's defaults allow.
 */
export const openTimeoutMs = 60_000;

/**
 * Every backend the store runs on; PostgreSQL runs when DATABASE_URL is set. describeEachBackend
 * runs a suite against each on a shared, emptied database; a suite that needs a database of
 * its own per test opens it itself with `describe.skipIf(backend.skip)(backend.name, ...)`.
 */
export const backends: readonly TestBackend[] = [
  { name: 'pglite', skip: false, open: openPgliteTestDatabase },
  { name: 'postgres', skip: !databaseUrl, open: openPostgresTestDatabase },
];

/** A suite's database as its tests see it: usable from the suite's first test to its last. */
export type SuiteDatabase = Pick<TestDatabase, 'db' | 'connect'>;

/**
 * Defines the suite `name` once per backend, each on its own migrated database: opened before
 * the first test, emptied before every test (before the suite's own beforeEach hooks run) and
 * disposed after the last.
 */
export function describeEachBackend(name: string, defineTests: (database: SuiteDatabase, backend: TestBackend) => void): void {
  for (const backend of backends) {
    describe.skipIf(backend.skip)(`${name} (${backend.name})`, () => {
      let opened: TestDatabase | undefined;
      const current = (): TestDatabase => {
        if (!opened) throw new Error(`${name} (${backend.name}): the database is open only while the suite's tests run`);
        return opened;
      };

      beforeAll(async () => {
        opened = await backend.open();
      }, openTimeoutMs);
      afterAll(() => opened?.dispose(), openTimeoutMs);
      beforeEach(() => current().truncate());

      defineTests(
        {
          get db() {
            return current().db;
          },
          connect: () => current().connect(),
        },
        backend,
      );
    });
  }
}

/**
 * One statement, run as a script (no statement time-out): TRUNCATE takes a lock on every table and
 * renews their files, which on a PostgreSQL server sharing two busy cores with the suites can take
 * longer than the tests' statement time-out without anything being wrong.
 */
const truncateEveryTable = `DO $$
DECLARE
  names text;
BEGIN
  SELECT string_agg(format('%I', tablename), ', ') INTO names
    FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations';
  IF names IS NOT NULL THEN
    EXECUTE 'TRUNCATE ' || names || ' RESTART IDENTITY CASCADE';
  END IF;
END $$`;

async function truncateAll(db: Db): Promise<void> {
  await db.exec(truncateEveryTable);
}

async function openPgliteTestDatabase({ migrate: migrated = true } = {}): Promise<TestDatabase> {
  // A migrated database starts from the template (as the platform's does); an unmigrated one is empty.
  const db = migrated ? await openPglite('memory://') : pgliteDb(await createPglite('memory://'));
  if (migrated) await migrate(db);
  return {
    db,
    // The shared session must stay open until dispose() closes it.
    connect: async () => ({ ...db, close: async () => {} }),
    truncate: () => truncateAll(db),
    dispose: () => db.close(),
  };
}

/**
 * PostgreSQL time-outs for the suites. The platform's own (ADR 0037: connect 1 s, statements
 * 1.5 s) judge a database that answers; here every suite shares two cores with the others, and a
 * connection can take longer than a second to open while the machine is busy, which is not a
 * database failure. The connect time-out gets the most the E1 reservation window leaves
 * (checkReservationWindow: E3's 10 s, these two and a second of margin within 15 s). The outage
 * suites run the platform with its own time-outs, in child processes.
 */
export const testDatabaseTimeouts = { connectMs: 2_500, statementMs: 1_500 };

/** A fresh schema per test database, so test files running in parallel never see each other. */
async function openPostgresTestDatabase({ migrate: migrated = true } = {}): Promise<TestDatabase> {
  const url = databaseUrl!;
  const schema = `test_${randomBytes(6).toString('hex')}`;
  await withAdminClient(url, (client) => client.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`));
  const openPools = new Set<Db>();
  const connect = async (): Promise<Db> => {
    const db = await openPostgres(url, { schema, maxConnections: 4, timeouts: testDatabaseTimeouts });
    openPools.add(db);
    return {
      ...db,
      close: async () => {
        if (openPools.delete(db)) await db.close();
      },
    };
  };
  const db = await connect();
  if (migrated) await migrate(db);
  return {
    db,
    connect,
    truncate: () => truncateAll(db),
    async dispose() {
      // Drop the schema even when a pool fails to close, so no test leaves a schema behind.
      const closed = await Promise.allSettled([...openPools].map((db) => db.close()));
      await withAdminClient(url, (client) => client.query(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE`));
      const failure = closed.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    },
  };
}

/** Where a platform under test keeps its data: the `Config` fields that say so. */
export interface PlatformDatabaseConfig {
  databaseUrl: string | undefined;
  dataDir: string;
  databaseTimeouts: typeof testDatabaseTimeouts;
}

/** A platform's own database on one backend, to pass to startPlatform and remove after it stopped. */
export interface PlatformDatabase {
  config: PlatformDatabaseConfig;
  /** Removes the database (PostgreSQL: drops it, closing any connection still open). */
  dispose(): Promise<void>;
}

/**
 * A database of its own for one platform under test. PGlite: a throw-away in-memory database the
 * platform opens itself. PostgreSQL: a fresh database `mb_t_<random>` on the server DATABASE_URL
 * names, migrated by the platform as it starts. A database rather than a schema, because the
 * platform's advisory locks (migrations, the outbox claim) are per database: harnesses in test
 * files running in parallel then never wait on each other's locks.
 */
export async function openPlatformDatabase(backend: TestBackend['name'] = 'pglite'): Promise<PlatformDatabase> {
  if (backend === 'pglite')
    return { config: { databaseUrl: undefined, dataDir: 'memory://', databaseTimeouts: testDatabaseTimeouts }, dispose: async () => {} };
  if (!databaseUrl) throw new Error('the postgres backend needs DATABASE_URL');
  const name = `mb_t_${randomBytes(6).toString('hex')}`;
  await withAdminClient(databaseUrl, (client) => client.query(`CREATE DATABASE ${quoteIdentifier(name)}`));
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return {
    config: { databaseUrl: url.toString(), dataDir: 'memory://', databaseTimeouts: testDatabaseTimeouts },
    dispose: () => withAdminClient(databaseUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`)),
  };
}

/**
 * Defines the platform suite `name` once per backend (PostgreSQL skipped without DATABASE_URL);
 * the suite starts its platforms with `backend.name` (PlatformHarness, startHarness and
 * startSandboxPlatform take it), each on a database of its own. The backends' suites run one
 * after the other, never at once in the worker's process: PGlite computes on the event loop, and
 * a second of it there fires the PostgreSQL client's time-outs of the other suite before its
 * answers are read (ADR 0044).
 */
export function describeOnBackends(name: string, defineTests: (backend: TestBackend) => void): void {
  for (const backend of backends) describe.skipIf(backend.skip)(`${name} (${backend.name})`, () => defineTests(backend));
}

async function withAdminClient(url: string, fn: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}
