/**
 * Bytes per payment before and after the retention policy (ADR 0041): seeds GROWTH_BYTES_PAYMENTS
 * (default 100,000) payments (bench/growth/seed.ts) into a fresh schema, measures every table a
 * payment leaves rows in, then closes their statement days and applies every retention period
 * with a clock 200 days on (past the 90-day periods, well within the financial record's 5 years),
 * and measures again, each time after VACUUM FULL. `npm run bench:growth:bytes`; writes
 * bench/results/growth-bytes.md.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { retentionBounds, retentionKinds } from '../../src/contract/records.js';
import { openDb } from '../../src/platform/store/db.js';
import { createStore } from '../../src/platform/store/index.js';
import { openBenchDatabase } from '../postgres.js';
import { seedGrowth } from './seed.js';

const DAY_MS = 86_400_000;
const TABLES = [
  'order_payments',
  'payment_status_history',
  'deliveries',
  'delivery_attempts',
  'idempotency_keys',
  'event_log',
  'reconcile_asks',
  'statement_lines',
] as const;

async function measure(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`VACUUM FULL ${TABLES.join(', ')}`);
    const sizes: Record<string, number> = {};
    for (const table of TABLES)
      sizes[table] = Number(
        (await client.query<{ bytes: string }>('SELECT pg_total_relation_size($1::regclass)::text AS bytes', [table])).rows[0]!.bytes,
      );
    return sizes;
  } finally {
    await client.end();
  }
}

export async function measureBytes(count: number): Promise<string> {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const database = await openBenchDatabase(url);
  if (!database) throw new Error(`PostgreSQL at ${url} is unreachable`);
  try {
    await seedGrowth(database.url, count, { spreadDays: 100, log: () => undefined });
    const before = await measure(database.url);
    const db = await openDb({ databaseUrl: database.url, pgliteDataDir: 'memory://' });
    try {
      const later = new Date(Date.now() + 200 * DAY_MS);
      const store = createStore(db, { clock: () => later });
      while (await store.statements.closeNextDay());
      for (const kind of retentionKinds) while ((await store.retention.purge(kind, retentionBounds()[kind].default * DAY_MS, 10_000)) > 0);
    } finally {
      await db.close();
    }
    const after = await measure(database.url);
    const total = (sizes: Record<string, number>) => Object.values(sizes).reduce((sum, bytes) => sum + bytes, 0);
    const perPayment = (bytes: number) => Math.round(bytes / count);
    const rows = TABLES.map((table) => `| ${table} | ${perPayment(before[table]!)} | ${perPayment(after[table]!)} |`);
    return [
      '# Bytes per payment, before and after the retention policy',
      '',
      `${count.toLocaleString('en')} payments seeded by \`bench/growth/seed.ts\` (one real payment through the platform: E1, E5,`,
      'its E6 delivered, one event naming its user; copied by SQL), PostgreSQL, each table measured with',
      '`pg_total_relation_size` (heap, TOAST and indexes) after `VACUUM FULL`. "After" is 200 days on: statement days',
      'closed, every `x-retention` default applied (event payloads, E6 deliveries and attempts, personal order',
      'details, idempotency keys gone; the financial record and its statement line kept). Command:',
      `\`GROWTH_BYTES_PAYMENTS=${count} npm run bench:growth:bytes\`, ${new Date().toISOString().slice(0, 16)}Z.`,
      '',
      '| Table | Bytes per payment before | After the policy |',
      '|---|---:|---:|',
      ...rows,
      `| **All** | **${perPayment(total(before))}** | **${perPayment(total(after))}** |`,
      '',
    ].join('\n');
  } finally {
    await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const count = Number(process.env.GROWTH_BYTES_PAYMENTS ?? 100_000);
  const report = await measureBytes(count);
  writeFileSync(path.join(import.meta.dirname, '..', 'results', 'growth-bytes.md'), report);
  process.stdout.write(report);
}
