/**
 * The growth bench's history (ADR 0041): one real payment made through the platform (E1, E3 at a
 * fake host app, E5, its E6 delivered to a fake miniapp server, one event naming its user), then
 * copied by SQL (generate_series, in chunks) with everything it left behind, to `count` payments
 * spread back over `spreadDays`. Runs alone: `npx tsx bench/growth/seed.ts` seeds a fresh schema
 * of DATABASE_URL (GROWTH_PAYMENTS, default 5,000,000) and prints its URL, keeping it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { configFromEnv } from '../../src/platform/config.js';
import { loadRegistry } from '../../src/platform/registry/loadRegistry.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/server.js';
import { openBenchDatabase } from '../postgres.js';
import {
  E1_PATH,
  E5_PATH,
  e1Body,
  e5Body,
  hostappEventHeaders,
  hostappHeaders,
  miniappHeaders,
  parties,
  writeRegistry,
} from '../scenario.js';

export const DEFAULT_PAYMENTS = 5_000_000;
const DAY_MS = 86_400_000;

/** How many payments to seed: GROWTH_PAYMENTS, or the default. */
export function growthPayments(env = process.env): number {
  const count = Number(env.GROWTH_PAYMENTS ?? DEFAULT_PAYMENTS);
  if (!Number.isInteger(count) || count < 1) throw new Error(`GROWTH_PAYMENTS must be a positive whole number, got ${env.GROWTH_PAYMENTS}`);
  return count;
}

/** A fake host app (E3: a new id each time; E7: received) and a fake miniapp server (E6, E7), in process. */
export async function startFakes(): Promise<{ hostappUrl: string; miniappUrl: string; e6: () => number; close(): Promise<void> }> {
  // Ids unique across every fake ever started on a database: each run starts its own.
  const prefix = `hop_growth_${randomBytes(4).toString('hex')}_`;
  let next = 0;
  let e6 = 0;
  const answer = (handler: (url: string) => unknown) =>
    createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(handler(req.url ?? ''))));
    });
  const hostapp = answer((url) =>
    url.startsWith('/create-order-payment') ? { order_payment_id: `${prefix}${next++}` } : { received: true },
  );
  const miniapp = answer((url) => {
    if (url.startsWith('/complete-order')) {
      e6++;
      return { code: 'SUCCESS' };
    }
    return { received: true };
  });
  const listen = (server: Server) =>
    new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
    );
  const [hostappUrl, miniappUrl] = await Promise.all([listen(hostapp), listen(miniapp)]);
  const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));
  return { hostappUrl, miniappUrl, e6: () => e6, close: async () => void (await Promise.all([close(hostapp), close(miniapp)])) };
}

/** A platform instance on `databaseUrl` with the bench's partners; the records worker only when asked. */
export async function startGrowthPlatform(
  databaseUrl: string,
  fakes: { hostappUrl: string; miniappUrl: string },
  options: { records?: boolean; worker?: boolean } = {},
): Promise<RunningPlatform> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'growth-')), 'registry.json');
  writeRegistry(file, fakes.hostappUrl, fakes.miniappUrl);
  return startPlatform({
    registry: loadRegistry(file),
    config: {
      port: 0,
      host: '127.0.0.1',
      databaseUrl,
      logLevel: 'silent',
      redisUrl: undefined,
      // The bench measures the platform, not its budget: a rate limit far above the load.
      rateLimit: { perSecond: 1_000_000, burst: 1_000_000 },
      worker: { pollMs: 50, batchSize: 50, leaseMs: 60_000, enabled: options.worker ?? true },
      reconciler: { pollMs: 60_000, batchSize: 50, enabled: false },
      // The platform's own batch and rest ratio (what a deployment runs), polled every second.
      records: { ...configFromEnv({}).records, pollMs: 1_000, enabled: options.records ?? false },
    },
  });
}

async function post(url: string, headers: Record<string, string>, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text}`);
  return text;
}

/** The columns a copy writes (identity columns are left to the database). */
async function columnsOf(client: pg.Client, table: string): Promise<string[]> {
  const { rows } = await client.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = $1 AND is_identity = 'NO' AND is_generated = 'NEVER'
     ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((row) => row.column_name);
}

/**
 * Copies the seed payment's rows of each table `count - 1` times. Copy `i` gets ids suffixed
 * `_g<i>` (uuids derived from them) and every time moved back by `i × spacing`.
 */
async function copyHistory(databaseUrl: string, seedId: string, count: number, spreadDays: number, log: (line: string) => void) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const spacingMs = (spreadDays * DAY_MS) / count;
    const shift = (column: string) => `${column} - (i::double precision * ${spacingMs}) * interval '1 millisecond'`;
    const suffixed = (column: string) => `${column} || '_g' || i`;
    const uuid = (column: string) => `md5(${column}::text || '_g' || i)::uuid`;
    const tables: { table: string; where: string; overrides: Record<string, string> }[] = [
      {
        table: 'order_payments',
        where: 'order_payment_id = $1',
        overrides: {
          order_payment_id: suffixed('order_payment_id'),
          miniapp_order_id: suffixed('miniapp_order_id'),
          created_at: shift('created_at'),
          updated_at: shift('updated_at'),
          expires_at: shift('expires_at'),
        },
      },
      {
        table: 'payment_status_history',
        where: 'order_payment_id = $1',
        overrides: { order_payment_id: suffixed('order_payment_id'), at: shift('at') },
      },
      {
        table: 'deliveries',
        where: 'order_payment_id = $1',
        overrides: {
          delivery_id: uuid('delivery_id'),
          event_id: suffixed('event_id'),
          order_payment_id: suffixed('order_payment_id'),
          horizon_started_at: shift('horizon_started_at'),
          created_at: shift('created_at'),
          delivered_at: shift('delivered_at'),
        },
      },
      {
        table: 'delivery_attempts',
        where: 'delivery_id IN (SELECT delivery_id FROM deliveries WHERE order_payment_id = $1)',
        overrides: { delivery_id: uuid('delivery_id'), started_at: shift('started_at') },
      },
      {
        table: 'idempotency_keys',
        where: 'order_payment_id = $1',
        overrides: {
          key: suffixed('key'),
          reservation_id: uuid('reservation_id'),
          order_payment_id: suffixed('order_payment_id'),
          reserved_at: shift('reserved_at'),
          expires_at: shift('expires_at'),
        },
      },
      {
        table: 'event_log',
        // The seed's own event only: its copies name the same user, and would be copied again in every later chunk.
        where: 'names_payments = ARRAY[$1::text]',
        overrides: { event_id: suffixed('event_id'), names_payments: `ARRAY[${suffixed('names_payments[1]')}]`, at: shift('at') },
      },
    ];
    const chunk = 200_000;
    for (let from = 1; from < count; from += chunk) {
      const to = Math.min(count - 1, from + chunk - 1);
      const started = performance.now();
      await client.query('BEGIN');
      for (const { table, where, overrides } of tables) {
        const columns = await columnsOf(client, table);
        const select = columns.map((column) => overrides[column] ?? column).join(', ');
        await client.query(
          `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${select} FROM ${table}, generate_series($2::int, $3::int) AS i WHERE ${where}`,
          [seedId, from, to],
        );
      }
      await client.query('COMMIT');
      log(`seeded payments ${from}..${to} in ${Math.round(performance.now() - started)} ms`);
    }
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

/**
 * Seeds `databaseUrl` (an empty, or new, schema) with `count` payments: one real, the rest copies.
 * Returns the real payment's id.
 */
export async function seedGrowth(
  databaseUrl: string,
  count: number,
  options: { spreadDays?: number; log?: (line: string) => void } = {},
): Promise<string> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const fakes = await startFakes();
  const platform = await startGrowthPlatform(databaseUrl, fakes);
  let seedId: string;
  try {
    const created = JSON.parse(await post(platform.url + E1_PATH, miniappHeaders, e1Body(`growth-seed-${Date.now()}`))) as {
      order_payment_id: string;
    };
    seedId = created.order_payment_id;
    await post(platform.url + E5_PATH, hostappHeaders, e5Body(seedId));
    const userId = (JSON.parse(e1Body('x')) as { order: { hostapp_user_id?: string } }).order.hostapp_user_id ?? 'growth-user';
    await post(
      `${platform.url}/api/v1/events/hostapp/`,
      hostappEventHeaders,
      JSON.stringify({
        app_id: parties.appId,
        client_id: parties.clientId,
        event_type: 'user_profile_updated',
        payload: { order_payment_id: seedId, hostapp_user_id: userId },
      }),
    );
    const deadline = Date.now() + 30_000;
    while (fakes.e6() < 1) {
      if (Date.now() > deadline) throw new Error('the seed payment’s E6 never arrived');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Its delivery recorded as delivered before it is copied.
    const store = platform.platform.store;
    while (
      (await store.db.query<{ status: string }>('SELECT status FROM deliveries WHERE order_payment_id = $1', [seedId]))[0]?.status !==
      'delivered'
    ) {
      if (Date.now() > deadline) throw new Error('the seed payment’s delivery was never recorded');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await platform.close();
    await fakes.close();
  }
  await copyHistory(databaseUrl, seedId, count, options.spreadDays ?? 112.5, log);
  return seedId;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const database = await openBenchDatabase(url);
  if (!database) throw new Error(`PostgreSQL at ${url} is unreachable`);
  const count = growthPayments();
  const started = performance.now();
  try {
    await seedGrowth(database.url, count);
  } catch (error) {
    await database.drop();
    throw error;
  }
  process.stdout.write(`seeded ${count} payments in ${Math.round((performance.now() - started) / 1000)} s: ${database.url}\n`);
}
