// Each driver is loaded only when its backend is used: PGlite alone takes ~200 ms to import.
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import type { BatchOptions } from './batch.js';
import { preparePgliteDataDir } from './pgliteCluster.js';

/**
 * A hot statement PostgreSQL parses and plans once per connection and then reuses, instead of
 * parsing its text on every call. One name, one text: pg refuses a name reused for other SQL.
 */
export interface PreparedStatement {
  name: string;
  text: string;
}

/** Anything that runs one parameterised SQL statement and returns its rows. */
export interface Queryable {
  query<T>(sql: string | PreparedStatement, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/**
 * The one database interface the store uses. Both backends speak the same SQL (PGlite is
 * PostgreSQL compiled to WASM), so repositories never branch on the backend.
 */
export interface Db extends Queryable {
  readonly backend: 'pglite' | 'postgres';
  /**
   * How many statements this process can have running at once: PGlite has one session,
   * PostgreSQL the pool's connections. A batcher sends no more than this at once (batchingFor).
   */
  readonly statementsAtOnce: number;
  /** Runs fn in one transaction: committed when fn resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DbConfig {
  /** PostgreSQL connection string; when set, PostgreSQL is used instead of PGlite. */
  databaseUrl?: string;
  /** PostgreSQL pool size (default defaultMaxConnections). */
  maxConnections?: number;
  /** PGlite data directory, e.g. `.data/pglite`, or `memory://` for a throw-away database. */
  pgliteDataDir: string;
}

export function openDb(config: DbConfig): Promise<Db> {
  return config.databaseUrl
    ? openPostgres(config.databaseUrl, { maxConnections: config.maxConnections })
    : openPglite(config.pgliteDataDir);
}

function textOf(sql: string | PreparedStatement): string {
  return typeof sql === 'string' ? sql : sql.text;
}

/** True when the statement failed on a unique constraint (SQLSTATE 23505), on either backend. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}

/** postgresql.conf of an embedded database (PGlite writes it on every open). */
export const pgliteConf = 'shared_buffers = 16MB';

export async function openPglite(dataDir: string): Promise<Db> {
  // A fresh directory gets a cluster copied from a template, so initdb never runs (and never
  // holds its memory) in this process (ADR 0021); PGlite then opens an existing directory.
  if (!dataDir.includes('://')) await preparePgliteDataDir(dataDir);
  return pgliteDb(await createPglite(dataDir));
}

/** PGlite on `dataDir` with the embedded database's settings. */
export async function createPglite(dataDir: string): Promise<PGlite> {
  const { PGlite: PGliteClass } = await import('@electric-sql/pglite');
  // 16 MB of shared buffers instead of PGlite's 128 MB: the embedded database serves one
  // process's working set, and the buffers' pages count in that process's RSS (ADR 0021).
  return PGliteClass.create(dataDir, { postgresqlconf: pgliteConf });
}

/**
 * A batcher's options on this database: no more statements at once than it can run (ADR 0032).
 * On PGlite that is one: a second statement would only wait in PGlite's queue, alone, where the
 * requests behind it could not join it.
 */
export function batchingFor(db: Pick<Db, 'statementsAtOnce'>, options: BatchOptions): BatchOptions {
  return { ...options, maxInFlight: Math.max(1, Math.min(options.maxInFlight, db.statementsAtOnce)) };
}

/** Resolves after the I/O the event loop has ready now has been handled (a setImmediate). */
function afterPendingIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The store's database interface over an open PGlite. */
export function pgliteDb(pglite: PGlite): Db {
  return {
    backend: 'pglite',
    statementsAtOnce: 1,
    // PGlite runs in this process: there is no round trip a prepared statement would save.
    async query<T>(sql: string | PreparedStatement, params: readonly unknown[] = []) {
      // PGlite runs a statement to its commit without giving the event loop a turn, so without
      // this every E1 write would be sent, and committed, alone before the next request is even
      // read. Waiting for the I/O already pending lets the requests read in this turn queue
      // behind it and go together in the batcher's next statement: one parse, plan and commit
      // for all of them (ADR 0032). Within a transaction there is no wait: it holds the session.
      await afterPendingIo();
      return (await pglite.query<T>(textOf(sql), [...params])).rows;
    },
    async exec(sql: string) {
      await pglite.exec(sql);
    },
    // PGlite has a single session; its transaction() holds that session exclusively, so other
    // queries wait for the commit exactly as they would wait for row locks on PostgreSQL.
    transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      return pglite.transaction((tx) =>
        fn({
          async query<R>(sql: string | PreparedStatement, params: readonly unknown[] = []) {
            return (await tx.query<R>(textOf(sql), [...params])).rows;
          },
          async exec(sql: string) {
            await tx.exec(sql);
          },
        }),
      );
    },
    close: () => pglite.close(),
  };
}

/**
 * Pool size per instance. A connection is held for one statement at a time (two per E1, one per
 * E6 attempt, none while a partner is called), so 20 keeps 50 concurrent requests from queueing
 * for a connection while leaving room for several instances under PostgreSQL's default 100.
 */
export const defaultMaxConnections = 20;

export interface PostgresOptions {
  /** Schema to work in (sets `search_path` on every connection); tests use one per file. */
  schema?: string;
  /** Pool size (default defaultMaxConnections). */
  maxConnections?: number | undefined;
}

/** pg's query config: a named statement is parsed once per connection, a string every time. */
function pgQuery(sql: string | PreparedStatement, params: readonly unknown[]): pg.QueryConfig {
  return typeof sql === 'string' ? { text: sql, values: [...params] } : { name: sql.name, text: sql.text, values: [...params] };
}

export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<Db> {
  const { default: pgModule } = await import('pg');
  const pool = new pgModule.Pool({
    connectionString: url,
    max: options.maxConnections ?? defaultMaxConnections,
    ...(options.schema ? { options: `-c search_path=${quoteIdentifier(options.schema)}` } : {}),
  });
  // An idle client losing its connection emits 'error' on the pool; without a listener that
  // would crash the process. The pool drops the client and the next query reports the failure.
  pool.on('error', () => {});
  return {
    backend: 'postgres',
    statementsAtOnce: options.maxConnections ?? defaultMaxConnections,
    async query<T>(sql: string | PreparedStatement, params: readonly unknown[] = []) {
      return (await pool.query(pgQuery(sql, params))).rows as T[];
    },
    async exec(sql: string) {
      await pool.query(sql);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({
          async query<R>(sql: string | PreparedStatement, params: readonly unknown[] = []) {
            return (await client.query(pgQuery(sql, params))).rows as R[];
          },
          async exec(sql: string) {
            await client.query(sql);
          },
        });
        await client.query('COMMIT');
        client.release();
        return result;
      } catch (error) {
        // A connection whose ROLLBACK failed is in an unknown state: destroy it, don't reuse it.
        await client.query('ROLLBACK').then(
          () => client.release(),
          (rollbackError: Error) => client.release(rollbackError),
        );
        throw error;
      }
    },
    close: () => pool.end(),
  };
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
