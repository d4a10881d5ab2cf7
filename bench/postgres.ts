import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { quoteIdentifier } from '../src/platform/store/db.js';

/**
 * A fresh schema for one benchmark run, named in the URL the platform processes get
 * (`options=-c search_path=...`), dropped at the end; undefined when PostgreSQL is unreachable.
 */
export async function openBenchDatabase(url: string): Promise<{ url: string; schema: string; drop(): Promise<void> } | undefined> {
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  try {
    await admin(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
  } catch {
    return undefined;
  }
  const scoped = new URL(url);
  scoped.searchParams.set('options', `-c search_path=${schema}`);
  return { url: scoped.toString(), schema, drop: () => admin(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE`) };
}

/** The bytes a WAL position (pg_lsn text, `16/B374D848`) lies from the start of the WAL. */
export function lsnBytes(lsn: string): bigint {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(lsn);
  if (!match) throw new Error(`not a WAL position: ${lsn}`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

/**
 * One connection, held for the run, that watches what a contender costs PostgreSQL: the WAL
 * position (server-wide, so other sessions' writes land in a difference too), the size of a
 * schema's tables with their indexes and TOAST (the contender's own), and the backends whose
 * connections carry an application_name.
 */
export interface PostgresObserver {
  walPosition(): Promise<bigint>;
  schemaBytes(schema: string): Promise<number>;
  backendPids(applicationName: string): Promise<number[]>;
  /** Every backend of this bench run (application_name bench-…, this observer's own included). */
  benchBackendPids(): Promise<number[]>;
  close(): Promise<void>;
}

export async function observePostgres(url: string): Promise<PostgresObserver> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000, application_name: 'bench-observer' });
  await client.connect();
  return {
    async walPosition() {
      const { rows } = await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      return lsnBytes(rows[0]!.lsn);
    },
    async schemaBytes(schema) {
      const { rows } = await client.query<{ bytes: string | null }>(
        `SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`,
        [schema],
      );
      return Number(rows[0]?.bytes ?? 0);
    },
    async backendPids(applicationName) {
      const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
        applicationName,
      ]);
      return rows.map((row) => row.pid);
    },
    async benchBackendPids() {
      const { rows } = await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'bench-%'");
      return rows.map((row) => row.pid);
    },
    close: () => client.end(),
  };
}
