// Each driver is loaded only when its backend is used: PGlite alone takes ~200 ms to import.
import type pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  backoffDelay,
  createAvailability,
  databaseBackoff,
  DatabaseUnavailableError,
  isUnavailable,
  type Availability,
} from './availability.js';
import type { BatchOptions } from './batch.js';
import { pgliteTemplateArchive, preparePgliteDataDir } from './pgliteCluster.js';
import { startEmbeddedPglite, type EmbeddedPglite } from './pgliteThread.js';

/**
 * A hot statement PostgreSQL parses and plans once per connection and then reuses, instead of
 * parsing its text on every call. One name, one text: pg refuses a name reused for other SQL.
 * The plan it keeps may be made while the tables are small and used after they grew (nothing
 * replans it until the tables are analyzed), so a batched statement reaches a table only by
 * its key (ADR 0013).
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
  /**
   * Whether the database answers (ADR 0037). A statement that fails because the database cannot
   * be reached rejects with DatabaseUnavailableError, and while it is down statements are refused
   * at once; background loops wait on `availability.whenUp()`.
   */
  readonly availability: Availability;
  /**
   * Runs fn in one transaction: committed when fn resolves, rolled back when it throws. Its
   * statements have the pool's statement time-out unless `statementMs` gives background work
   * (closing a statement day) the longer one its size needs; requests never pass it (ADR 0037).
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: { statementMs?: number }): Promise<T>;
  /**
   * Keeps one connection listening on `channel` (PostgreSQL's LISTEN), reconnecting on the
   * database back-off after it is lost; `onReconnected` runs after each reconnection, for
   * whatever the listener may have missed. PGlite is one process: nothing to hear, a no-op.
   */
  listen(channel: string, onNotification: (payload: string) => void, onReconnected: () => void): Promise<Listening>;
  close(): Promise<void>;
}

/** A LISTEN connection kept open by Db.listen. */
export interface Listening {
  /** Stops listening and closes the connection. */
  end(): Promise<void>;
}

/**
 * How long a statement may wait for the database (ADR 0037): `connectMs` for a connection (a new
 * one, or a pooled one to be free), `statementMs` for the answer. Twice both plus E3's 10 s stay
 * within the 15 s a client allows an E1 (ADR 0010), however the database fails mid-request.
 */
export interface DatabaseTimeouts {
  connectMs: number;
  statementMs: number;
}

export const defaultDatabaseTimeouts: DatabaseTimeouts = { connectMs: 1_000, statementMs: 1_500 };

export interface DbConfig {
  /** PostgreSQL connection string; when set, PostgreSQL is used instead of PGlite. */
  databaseUrl?: string;
  /** PostgreSQL pool size (default defaultMaxConnections). */
  maxConnections?: number;
  /** PostgreSQL time-outs (default defaultDatabaseTimeouts). */
  timeouts?: DatabaseTimeouts;
  /** PGlite data directory, e.g. `.data/pglite`, or `memory://` for a throw-away database. */
  pgliteDataDir: string;
}

export function openDb(config: DbConfig): Promise<Db> {
  return config.databaseUrl
    ? openPostgres(config.databaseUrl, { maxConnections: config.maxConnections, timeouts: config.timeouts })
    : openPglite(config.pgliteDataDir);
}

/**
 * Runs `statement`, turning a failure of the database itself into DatabaseUnavailableError and
 * telling `availability`; a statement's own error (a constraint, a syntax error) passes as it is.
 */
async function guarded<T>(availability: Availability, statement: () => Promise<T>): Promise<T> {
  if (!availability.up) throw new DatabaseUnavailableError('the database is unavailable; the platform is reconnecting');
  try {
    return await statement();
  } catch (error) {
    throw unavailableOr(availability, error);
  }
}

function unavailableOr(availability: Availability, error: unknown): unknown {
  if (!isUnavailable(error) || error instanceof DatabaseUnavailableError) return error;
  availability.suspect(error);
  const full = (error as { code?: unknown }).code === '53100';
  return new DatabaseUnavailableError(full ? 'the database cannot write: its disk is full' : 'the database connection failed', {
    cause: error,
  });
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
  // A throw-away `memory://` database loads the same template, archived.
  if (dataDir === 'memory://') return pgliteDb(await memoryDatabases.open());
  if (!dataDir.includes('://')) await preparePgliteDataDir(dataDir);
  return pgliteDb(await createPglite(dataDir));
}

/**
 * Where `memory://` databases come from: each a PGlite booted from the migrated template's archive.
 * The test suites put a recycler in its place (test/support/memoryDatabases.ts, ADR 0044): a
 * closed database emptied back to the template's state instead of a new one booted, the largest
 * single cost of the suites' platform starts.
 */
export const memoryDatabases: { open(): Promise<EmbeddedPglite> } = {
  open: async () => createPglite('memory://', await pgliteTemplateArchive()),
};

/**
 * PGlite on `dataDir`, on a thread of its own (ADR 0047), with the embedded database's settings;
 * `loadDataDir` fills a fresh one from an archive.
 */
export function createPglite(dataDir: string, loadDataDir?: Blob): Promise<EmbeddedPglite> {
  // 16 MB of shared buffers instead of PGlite's 128 MB: the embedded database serves one
  // process's working set, and the buffers' pages count in that process's RSS (ADR 0021).
  return startEmbeddedPglite(dataDir, { postgresqlconf: pgliteConf, ...(loadDataDir ? { loadDataDir } : {}) });
}

/**
 * A batcher's options on this database: no more statements at once than it can run (ADR 0032).
 * On PGlite that is one: a second statement would only wait in PGlite's queue, alone, where the
 * requests behind it could not join it.
 */
export function batchingFor(db: Pick<Db, 'statementsAtOnce'>, options: BatchOptions): BatchOptions {
  return { ...options, maxInFlight: Math.max(1, Math.min(options.maxInFlight, db.statementsAtOnce)) };
}

/**
 * The store's database interface over an open PGlite. It fails where a file system does: a full
 * disk refuses writes (SQLSTATE 53100) while reads go on, and a closed or broken PGlite refuses
 * everything; both are DatabaseUnavailableError, and the availability probe sees the second.
 */
export function pgliteDb(pglite: EmbeddedPglite): Db {
  const availability = createAvailability({
    probe: async () => {
      await pglite.query('SELECT 1');
    },
  });
  return {
    backend: 'pglite',
    statementsAtOnce: 1,
    availability,
    // PGlite runs in this process: there is no round trip a prepared statement would save. Its
    // thread runs one statement at a time while this one reads requests, which queue in the
    // batcher and go together in its next statement (ADR 0032, ADR 0047).
    query<T>(sql: string | PreparedStatement, params: readonly unknown[] = []) {
      return guarded(availability, async () => (await pglite.query<T>(textOf(sql), params)).rows);
    },
    exec(sql: string) {
      return guarded(availability, async () => {
        await pglite.exec(sql);
      });
    },
    // PGlite has a single session; its transaction() holds that session exclusively, so other
    // queries wait for the commit exactly as they would wait for row locks on PostgreSQL.
    transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      return guarded(availability, () =>
        pglite.transaction((tx) =>
          fn({
            async query<R>(sql: string | PreparedStatement, params: readonly unknown[] = []) {
              return (await tx.query<R>(textOf(sql), params)).rows;
            },
            async exec(sql: string) {
              await tx.exec(sql);
            },
          }),
        ),
      );
    },
    listen: async () => ({ end: async () => {} }),
    close: async () => {
      availability.close();
      await pglite.close();
    },
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
  /** Default defaultDatabaseTimeouts. */
  timeouts?: DatabaseTimeouts | undefined;
}

/** pg's query config: a named statement is parsed and planned once per connection, a string every time. */
function pgQuery(sql: string | PreparedStatement, params: readonly unknown[], timeoutMs: number | undefined): pg.QueryConfig {
  const config: pg.QueryConfig & { query_timeout?: number } =
    typeof sql === 'string' ? { text: textOf(sql), values: [...params] } : { name: sql.name, text: sql.text, values: [...params] };
  if (timeoutMs !== undefined) config.query_timeout = timeoutMs;
  return config;
}

/**
 * PostgreSQL through a pg pool of at most `maxConnections`, plus one LISTEN connection per
 * `listen` (ADR 0037): every connection, pooled, checked out or listening, has an 'error'
 * listener, so a connection the server drops fails the statement it served and is replaced,
 * never crashing the process; connecting and every statement are bounded by the time-outs; a
 * lost connection triggers the single availability probe instead of a reconnection per request.
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<Db> {
  const { default: pgModule } = await import('pg');
  const timeouts = options.timeouts ?? defaultDatabaseTimeouts;
  const maxConnections = options.maxConnections ?? defaultMaxConnections;
  const connection = {
    connectionString: url,
    ...(options.schema ? { options: `-c search_path=${quoteIdentifier(options.schema)}` } : {}),
    // A peer that vanished without closing (a cut network) is noticed by the kernel, not only by
    // the next statement's time-out.
    keepAlive: true,
    connectionTimeoutMillis: timeouts.connectMs,
  };
  const pool = new pgModule.Pool({ ...connection, max: maxConnections });
  const availability = createAvailability({
    // Through the pool, so the probe counts within its size: the pool and one listener per
    // `listen` are every connection this process opens, whatever happens.
    probe: async () => {
      await pool.query(pgQuery('SELECT 1', [], timeouts.statementMs));
    },
  });
  // An idle client losing its connection emits 'error' on the pool (the pool drops it); without a
  // listener that would crash the process. The loss also says the database may be down.
  pool.on('error', (error) => availability.suspect(error));
  // And every connection listens for its own loss for its whole life, from the moment it is
  // connected: the pool's listener is off while a client is checked out, and a new connection's
  // first read can carry its ReadyForQuery and the server's FATAL together, so the FATAL is
  // emitted before a caller awaiting pool.connect() could add a listener of its own (a backend
  // terminated as it started crashed the process). A transaction reads the loss from here.
  const lostConnections = new WeakMap<pg.ClientBase, unknown>();
  pool.on('connect', (client) =>
    client.on('error', (error) => {
      lostConnections.set(client, error);
      availability.suspect(error);
    }),
  );

  const run = <T>(sql: string | PreparedStatement, params: readonly unknown[], timeoutMs: number | undefined) =>
    guarded(availability, async () => (await pool.query(pgQuery(sql, params, timeoutMs))).rows as T[]);

  return {
    backend: 'postgres',
    statementsAtOnce: maxConnections,
    availability,
    query: (sql, params = []) => run(sql, params, timeouts.statementMs),
    // Scripts (migrations) run once at start-up and may take long: no statement time-out.
    async exec(sql) {
      await run(sql, [], undefined);
    },
    transaction: <T>(fn: (tx: Queryable) => Promise<T>, options: { statementMs?: number } = {}) =>
      guarded(availability, async () => {
        const statementMs = options.statementMs ?? timeouts.statementMs;
        const client = await pool.connect();
        // A connection lost before or between the transaction's statements fails the next one.
        const send = async (sql: string | PreparedStatement, params: readonly unknown[], timeoutMs: number | undefined) => {
          if (lostConnections.has(client)) throw lostConnections.get(client);
          return client.query(pgQuery(sql, params, timeoutMs));
        };
        try {
          await send('BEGIN', [], timeouts.statementMs);
          const result = await fn({
            async query<R>(sql: string | PreparedStatement, params: readonly unknown[] = []) {
              return (await send(sql, params, statementMs)).rows as R[];
            },
            async exec(sql: string) {
              await send(sql, [], undefined);
            },
          });
          await send('COMMIT', [], timeouts.statementMs);
          client.release();
          return result;
        } catch (error) {
          // A lost connection has nothing to roll back (the server ends the transaction with it),
          // and one whose ROLLBACK fails is in an unknown state: either is destroyed, never reused.
          if (lostConnections.has(client) || isUnavailable(error))
            client.release(error instanceof Error ? error : new Error(String(error)));
          else
            await send('ROLLBACK', [], timeouts.statementMs).then(
              () => client.release(),
              (rollbackError: Error) => client.release(rollbackError),
            );
          throw error;
        }
      }),
    listen: (channel, onNotification, onReconnected) =>
      listenWithReconnect(pgModule, connection, availability, channel, onNotification, onReconnected),
    async close() {
      availability.close();
      await pool.end();
    },
  };
}

/**
 * One LISTEN connection, kept (ADR 0037): connected once now; when it is lost, reconnected by a
 * single loop on the database back-off (never two attempts at once, never a second connection
 * left open), and `onReconnected` told so the caller re-reads what it may have missed. The first
 * connection must succeed: start-up reports a database it cannot listen on.
 */
async function listenWithReconnect(
  pgModule: typeof pg,
  connection: pg.ClientConfig,
  availability: Availability,
  channel: string,
  onNotification: (payload: string) => void,
  onReconnected: () => void,
): Promise<Listening> {
  const stop = new AbortController();
  let current: pg.Client | undefined;
  let reconnecting: Promise<void> | undefined;

  async function connectOnce(): Promise<pg.Client> {
    const client = new pgModule.Client(connection);
    // Every failure ends here: the client is ended once, and the loop below reconnects.
    client.on('error', (error) => {
      availability.suspect(error);
      if (client === current) lost();
    });
    try {
      await client.connect();
      await client.query({
        text: `LISTEN ${quoteIdentifier(channel)}`,
        query_timeout: connection.connectionTimeoutMillis,
      } as pg.QueryConfig);
    } catch (error) {
      client.removeAllListeners('end');
      await endQuietly(client);
      throw error;
    }
    client.on('notification', (message) => {
      if (message.channel === channel) onNotification(message.payload ?? '');
    });
    client.on('end', () => {
      if (client === current) lost();
    });
    return client;
  }

  function lost(): void {
    const previous = current;
    current = undefined;
    if (previous) void endQuietly(previous);
    if (stop.signal.aborted || reconnecting) return;
    reconnecting = (async () => {
      for (let attempt = 0; !stop.signal.aborted; attempt++) {
        await sleep(backoffDelay(databaseBackoff, attempt), undefined, { signal: stop.signal }).catch(() => undefined);
        if (stop.signal.aborted) return;
        try {
          const client = await connectOnce();
          if (stop.signal.aborted) {
            await endQuietly(client);
            return;
          }
          current = client;
          onReconnected();
          return;
        } catch {
          // The next attempt waits longer (capped); the availability probe reports the outage.
        }
      }
    })().finally(() => (reconnecting = undefined));
  }

  current = await connectOnce();
  return {
    async end() {
      stop.abort();
      await reconnecting;
      const client = current;
      current = undefined;
      if (client) await endQuietly(client);
    },
  };
}

/** Ends a client within the connect time-out, whatever state its connection is in. */
async function endQuietly(client: pg.Client): Promise<void> {
  // pg does not type its connection's socket; destroying it is the only way to end a client that hangs (ADR 0037).
  const socket = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    client.end().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        // end() waits for the server's goodbye; a vanished server never sends it.
        socket?.destroy();
        resolve();
      }, 1_000);
    }),
  ]);
  clearTimeout(timer);
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
