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
