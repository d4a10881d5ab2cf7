import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, quoteIdentifier, type Db, type PreparedStatement, type Queryable } from '../../src/platform/store/db.js';
import { createStore, type Store } from '../../src/platform/store/index.js';
import { backends, openTimeoutMs, testDatabaseTimeouts, type TestDatabase } from '../support/databases.js';
import { manualClock, newOrderPayment, refOf, seconds, transitionTo } from './fixtures.js';

// A named statement's plan is made once per connection and kept (ADR 0013): made here while the
// tables are empty, as at a platform's start, it must still reach a batch's rows by key when the
// tables hold many. Forcing the generic plan makes the kept plan the one EXPLAIN EXECUTE shows.
// PGlite plans every statement anew (it prepares nothing): there the plan is the one its
// current, never analyzed tables give. Each statement of E1, E2, E5 and the E6 attempts is
// EXPLAINed (ANALYZE, in a transaction rolled back) just before it runs for real, with the
// tables holding `filled` payments with their history, keys, deliveries and attempts.

/** Tables that grow with the payments served: no statement of the hot paths reads one whole. */
const growing = /Seq Scan on (order_payments|idempotency_keys|deliveries|delivery_attempts|payment_status_history|event_log)\b/;
const filled = 30_000;
/** Payments in the batch the statements are measured on. */
const batchSize = 20;

/** Buffers (pages) a plan touched, read or hit, across all its nodes. */
function pagesTouched(node: Record<string, unknown>): number {
  return (node['Shared Hit Blocks'] as number) + (node['Shared Read Blocks'] as number);
}

/** The plan's text form, for the Seq Scan check and for the failure message. */
function describePlan(node: Record<string, any>, depth = 0): string {
  const relation = node['Relation Name'] ? ` on ${node['Relation Name']}` : '';
  const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
  const line = `${'  '.repeat(depth)}${node['Node Type']}${relation}${index} (rows ${node['Actual Rows']} × ${node['Actual Loops']}, pages ${pagesTouched(node)})`;
  return [line, ...((node.Plans as Array<Record<string, any>>) ?? []).map((child) => describePlan(child, depth + 1))].join('\n');
}

/** A parameter as a literal of EXECUTE's argument list (EXPLAIN EXECUTE takes no bound parameters). */
function literal(value: unknown): string {
  const text = textOf(value);
  return text === null ? 'NULL' : pg.Client.prototype.escapeLiteral(text);
}
function textOf(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return `{${value.map((v) => (v === null ? 'NULL' : JSON.stringify(textOf(v)))).join(',')}}`;
  return String(value);
}

interface Measured {
  plan: string;
  pages: number;
}

/**
 * A Db whose named statements are each EXPLAINed (ANALYZE, BUFFERS) and rolled back just before
 * they run, while `probing`: the last plan per statement name is kept.
 */
function explaining(db: Db) {
  const plans = new Map<string, Measured>();
  let probing = false;
  async function explain(target: Queryable, statement: PreparedStatement, params: readonly unknown[], inTransaction: boolean) {
    const sql =
      db.backend === 'postgres'
        ? `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE ${quoteIdentifier(statement.name)}${params.length ? `(${params.map(literal).join(', ')})` : ''}`
        : `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`;
    const run = async (q: Queryable) => {
      const [row] = await q.query<{ 'QUERY PLAN': unknown }>(sql, db.backend === 'postgres' ? [] : params);
      const json = row!['QUERY PLAN'];
      const [{ Plan: plan }] = (typeof json === 'string' ? JSON.parse(json) : json) as [{ Plan: Record<string, any> }];
      plans.set(statement.name, { plan: describePlan(plan), pages: pagesTouched(plan) });
    };
    if (inTransaction) {
      await target.query('SAVEPOINT explained');
      await run(target);
      await target.query('ROLLBACK TO SAVEPOINT explained');
      return;
    }
    await db
      .transaction(async (tx) => {
        await run(tx);
        throw new RolledBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      });
  }
  const through =
    (target: Queryable, inTransaction: boolean) =>
    async <T>(sql: string | PreparedStatement, params: readonly unknown[] = []): Promise<T[]> => {
      if (probing && typeof sql !== 'string') await explain(target, sql, params, inTransaction);
      return target.query<T>(sql, params);
    };
  const wrapped: Db = {
    ...db,
    query: through(db, false),
    transaction: (fn, options) => db.transaction((tx) => fn({ ...tx, query: through(tx, true) }), options),
  };
  return {
    db: wrapped,
    plans,
    probe(on: boolean) {
      probing = on;
    },
  };
}

class RolledBack extends Error {}

/** Copying 30,000 rows, and a statement that reads a grown table whole, take longer than a request's time-out. */
const longStatements = { ...testDatabaseTimeouts, statementMs: 60_000 };

async function backendPid(db: Db): Promise<number> {
  const [row] = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return row!.pid;
}

async function schemaOf(db: Db): Promise<string> {
  const [row] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
  return row!.schema;
}

/** Copies of a template row, `count` of them, with the columns `set` gives (SQL of g, 1…count). */
async function copies(db: Db, table: string, template: string, count: number, set: Record<string, string>): Promise<void> {
  const members = Object.entries(set)
    .map(([column, expression]) => `'${column}', ${expression}`)
    .join(', ');
  await db.query(
    `INSERT INTO ${table} OVERRIDING SYSTEM VALUE
     SELECT copy.* FROM (SELECT * FROM ${table} WHERE ${template} LIMIT 1) t CROSS JOIN generate_series(1, ${count}) g
       CROSS JOIN LATERAL jsonb_populate_record(NULL::${table}, to_jsonb(t) || jsonb_build_object(${members})) copy`,
  );
}

/** One of each hot operation on `count` payments of one host app, as the benchmark sends them. */
async function serve(store: Store, clock: ReturnType<typeof manualClock>, count: number, tag: string): Promise<void> {
  const payments = Array.from({ length: count }, () => newOrderPayment());
  // E1: the reservation and the record.
  await Promise.all(
    payments.map(async (payment, index) => {
      const reserved = await store.idempotency.reserve(
        {
          app_id: payment.app_id,
          client_id: payment.client_id,
          miniapp_order_id: payment.miniapp_order_id,
          idempotency_key: `${tag}${index}`,
        },
        'h',
      );
      if (reserved.outcome !== 'reserved') throw new Error(reserved.outcome);
      expect((await store.orderPayments.create(payment, reserved.reservation)).outcome).toBe('created');
    }),
  );
  // E2: the read.
  expect((await Promise.all(payments.map((payment) => store.orderPayments.get(refOf(payment))))).every(Boolean)).toBe(true);
  // E5: the read and the apply.
  const applied = await Promise.all(payments.map((payment) => store.orderPayments.transition(transitionTo(payment, 'paid'), () => '{}')));
  expect(applied.map(({ outcome }) => outcome)).toEqual(payments.map(() => 'applied'));
  // E6: the claim and the attempts' record, half of them handing their slot on.
  const claimed = await store.outbox.claimDue({ limit: count, leaseMs: seconds(30), maxInFlightPerMiniapp: count });
  expect(claimed).toHaveLength(count);
  await Promise.all(
    claimed.map((delivery, index) => {
      const record = {
        delivery_id: delivery.delivery.delivery_id,
        lease_id: delivery.lease_id,
        started_at: clock.now(),
        duration_ms: 1,
        result: { outcome: 'delivered' as const, http_status: 200 },
      };
      return index % 2 ? store.outbox.recordAttempt(record) : store.outbox.recordAndHandOff(record, { leaseMs: seconds(30) });
    }),
  );
  // E8 and the miniapp event: the partner's rate limit and the event's log entry.
  await Promise.all(
    payments.map(async (payment, index) => {
      expect((await store.rateLimitBuckets.take(`kept-plans:${payment.app_id}`, 1_000_000, 1_000_000)).granted).toBe(1);
      await store.eventLog.record({
        event_id: `evt_${tag}${index}`,
        direction: 'hostapp_to_miniapp',
        app_id: payment.app_id,
        client_id: payment.client_id,
        event_type: 'kept_plans',
        external_event_id: null,
        payload: '{}',
        outcome: 'delivered',
        error_code: null,
        receiver_http_status: 200,
        receiver_response: '{}',
        duration_ms: 1,
      });
    }),
  );
  // Reconciliation, beside them: payments left in process, due for an ask, leased and recorded.
  const unsettled = Array.from({ length: count }, () => newOrderPayment({ reconcile_at: clock.now() }));
  await Promise.all(unsettled.map((payment) => store.orderPayments.create(payment, null)));
  clock.advance(seconds(1));
  const asks = await store.reconciliation.claimDue({ limit: count, leaseMs: seconds(60), maxInFlightPerHostapp: count });
  expect(asks).toHaveLength(count);
  const recorded = await Promise.all(
    asks.map((ask) =>
      store.reconciliation.recordAsk({
        ...ask,
        asked_at: clock.now(),
        duration_ms: 1,
        outcome: 'in_process',
        payment_status: 'in_process',
        next_at: new Date(clock.now().getTime() + seconds(3600)),
        stuck: false,
      }),
    ),
  );
  expect(recorded.every(Boolean)).toBe(true);
  clock.advance(seconds(1));
}

for (const backend of backends) {
  describe.skipIf(backend.skip)(`plans of the hot statements on grown tables (${backend.name})`, () => {
    let database: TestDatabase;
    let db: Db;
    let probe: ReturnType<typeof explaining>;
    /** What serving the grown batch read (readCounts), the EXPLAINs' runs included. */
    const servedCounts = new Map<string, number>();
    const clock = manualClock();

    beforeAll(async () => {
      database = await backend.open();
      if (backend.name === 'postgres') {
        // One connection, so every statement and the EXPLAINs share its kept plans.
        db = await openPostgres(process.env.DATABASE_URL!, {
          schema: await schemaOf(database.db),
          maxConnections: 1,
          timeouts: longStatements,
        });
        await db.query('SET plan_cache_mode = force_generic_plan');
      } else db = database.db;
      probe = explaining(db);
      const store = createStore(probe.db, { clock: clock.now, idempotencyStaleAfterMs: seconds(30) });
      // The plans are made (and on PostgreSQL kept) on empty tables.
      await serve(store, clock, 2, 'empty');
      // The tables grow by copies of the rows just written, nothing analyzing them. On PostgreSQL
      // another connection copies: its own foreign-key checks are planned on the grown tables.
      const n = filled;
      // The pool closes a connection idle for 10 s, and its kept plans with it: this one is kept busy.
      const session = await backendPid(db);
      const keepBusy = setInterval(() => void db.query('SELECT 1').catch(() => undefined), 1_000);
      const filler =
        backend.name === 'postgres'
          ? await openPostgres(process.env.DATABASE_URL!, {
              schema: await schemaOf(database.db),
              maxConnections: 1,
              timeouts: longStatements,
            })
          : database.db;
      await copies(filler, 'order_payments', `payment_status = 'paid'`, n, { order_payment_id: `'fill_' || g` });
      await copies(filler, 'payment_status_history', 'true', n, { id: '-g', order_payment_id: `'fill_' || g` });
      await copies(filler, 'idempotency_keys', 'true', n, { key: `'fill_' || g` });
      await copies(filler, 'deliveries', 'true', n, {
        delivery_id: 'gen_random_uuid()',
        seq: '-g',
        event_id: `'fill_' || g`,
        order_payment_id: `'fill_' || g`,
      });
      await filler.query(
        `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, outcome, http_status, error)
         SELECT delivery_id, 1, created_at, 1, 'delivered', 200, NULL FROM deliveries WHERE seq < 0`,
      );
      if (filler !== database.db) {
        // The filler's own scans (its INSERT … SELECT read deliveries whole) reach the statistics
        // views when its backend reports them: forced here, before ReadyForQuery, not at an exit
        // that may land after the count taken before the batch.
        await filler.query('SELECT pg_stat_force_next_flush()');
        await filler.close();
      }
      clearInterval(keepBusy);
      expect(await backendPid(db), 'the plans are still those made on the empty tables').toBe(session);
      probe.probe(true);
      const before = await readCounts(db);
      await serve(store, clock, batchSize, 'grown');
      const after = await readCounts(db);
      for (const [name, count] of after) servedCounts.set(name, count - (before.get(name) ?? 0));
    }, 120_000);
    afterAll(async () => {
      if (db !== database?.db) await db?.close();
      await database?.dispose();
    }, openTimeoutMs);

    const statements = [
      'store.idempotency.reserve',
      'store.orderPayments.record',
      'store.orderPayments.read',
      'store.orderPayments.apply',
      'store.outbox.claimDue',
      'store.outbox.recordBatch',
      'store.eventLog.record',
      'rate_limit_take_ahead',
      'store.reconciliation.claimDue',
      'store.reconciliation.recordAsk',
    ];
    it.each(statements)('%s reaches its rows by key: no table read whole, a bounded number of pages per payment', (name) => {
      const measured = probe.plans.get(name);
      expect(measured, `${name} ran`).toBeDefined();
      expect(measured!.plan, name).not.toMatch(growing);
      // A payment's rows, and every index entry written for them, are a few index descents (3 levels
      // at this size) and heap pages each;
      // a table read whole is thousands of pages.
      expect(measured!.pages, measured!.plan).toBeLessThanOrEqual(60 * batchSize);
    });

    // Every history entry and delivery is checked against its payment (a foreign key): the check is
    // a plan the connection keeps too, made on the empty tables. It must find the payment through
    // the primary key: through an index that leads with client_id it read every entry of the host
    // app's payments (migration 096). Writing a payment's entries costs each index a few pages.
    it('the foreign-key checks of history entries and deliveries find their payment by its primary key', () => {
      // The batch writes (and its EXPLAINs write again) about ten index entries per payment in
      // each; a check through one of these indexes read about 250 pages at 30,000 payments.
      const indexes = [...servedCounts].filter(([name]) => name.endsWith(' pages'));
      expect(indexes.length).toBeGreaterThan(5);
      for (const [index, pages] of indexes) expect(pages, index).toBeLessThanOrEqual(80 * batchSize);
    });

    // Everything the batch ran, the statements planned per call and the foreign-key checks
    // included: no table that grows with the payments served is read by a sequential scan.
    it('reads no table that grows with the payments served by a sequential scan', () => {
      expect(Object.fromEntries(growingTables.map((table) => [table, servedCounts.get(`${table} seq_tup_read`)]))).toEqual(
        Object.fromEntries(growingTables.map((table) => [table, 0])),
      );
    });
  });
}

/** Tables that grow with the payments served. */
const growingTables = [
  'order_payments',
  'payment_status_history',
  'idempotency_keys',
  'deliveries',
  'delivery_attempts',
  'event_log',
  'reconcile_asks',
];

/**
 * So far, by this connection's statements (the foreign-key checks' included): the pages of each
 * order_payments index but its primary key read or hit (`<index> pages`) and the rows each growing table's sequential scans
 * read (`<table> seq_tup_read`). A backend's counts reach the views once it flushes them.
 */
async function readCounts(db: Db): Promise<Map<string, number>> {
  await db.query('SELECT pg_stat_force_next_flush()');
  const indexes = await db.query<{ name: string; count: string | number }>(
    `SELECT indexrelname AS name, coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0) AS count FROM pg_statio_user_indexes
     WHERE schemaname = current_schema() AND relname = 'order_payments' AND indexrelname <> 'order_payments_pkey'`,
  );
  const tables = await db.query<{ name: string; count: string | number }>(
    `SELECT relname AS name, seq_tup_read AS count FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ANY ($1::text[])`,
    [growingTables],
  );
  return new Map([
    ...indexes.map((row): [string, number] => [`${row.name} pages`, Number(row.count)]),
    ...tables.map((row): [string, number] => [`${row.name} seq_tup_read`, Number(row.count)]),
  ]);
}

// The common case of E1's record statement, in the plan kept from empty tables (PostgreSQL keeps
// plans; PGlite plans every statement anew): a batch of new payments runs what a plain batch insert
// runs (ADR 0013).
const postgres = backends.find((backend) => backend.name === 'postgres')!;
describe.skipIf(postgres.skip)('the record statement of a batch of new payments (postgres)', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await postgres.open();
    // One connection, so every statement and the EXPLAINs share its kept plans.
    db = await openPostgres(process.env.DATABASE_URL!, {
      schema: await schemaOf(database.db),
      maxConnections: 1,
      timeouts: testDatabaseTimeouts,
    });
    await db.query('SET plan_cache_mode = force_generic_plan');
  }, openTimeoutMs);
  afterAll(async () => {
    await db?.close();
    await database?.dispose();
  }, openTimeoutMs);

  it("E1's record statement writes a batch of new payments as a plain batch insert would: each node once, the keys by key, the branches of an id on record never run", async () => {
    interface PlanNode {
      'Node Type': string;
      'Relation Name'?: string;
      'Actual Loops': number;
      Plans?: PlanNode[];
    }
    // Each record statement is first run under EXPLAIN ANALYZE in a transaction rolled back, with
    // the store's own parameters, then for real: the plan is the one the connection keeps.
    const plans: PlanNode[] = [];
    const rollBack = new Error('roll back the explained run');
    const recordLiteral = (value: unknown): string =>
      typeof value === 'number'
        ? String(value)
        : Array.isArray(value)
          ? `ARRAY[${value.map(recordLiteral).join(', ')}]::text[]`
          : `'${String(value).replaceAll("'", "''")}'`;
    const explaining: Db = {
      ...db,
      async query<T>(sql: string | PreparedStatement, params?: readonly unknown[]): Promise<T[]> {
        if (typeof sql !== 'string' && sql.name === 'store.orderPayments.record' && (await prepared(sql.name))) {
          await db
            .transaction(async (tx) => {
              const [row] = await tx.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
                `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ${quoteIdentifier(sql.name)}(${params!.map(recordLiteral).join(', ')})`,
              );
              plans.push(row!['QUERY PLAN'][0]!.Plan);
              throw rollBack;
            })
            .catch((error: unknown) => {
              if (error !== rollBack) throw error;
            });
        }
        return db.query<T>(sql, params);
      },
    };
    const prepared = async (name: string) => (await db.query('SELECT 1 FROM pg_prepared_statements WHERE name = $1', [name])).length > 0;
    const clock = manualClock();
    const store = createStore(explaining, { clock: clock.now, idempotencyStaleAfterMs: seconds(30) });
    // The first statement runs alone, the next eight share one (the batcher, ADR 0031).
    const payments = Array.from({ length: 9 }, () => newOrderPayment());
    const results = await Promise.all(
      payments.map(async (payment) => {
        const reserved = await store.idempotency.reserve(
          { app_id: payment.app_id, client_id: payment.client_id, miniapp_order_id: payment.miniapp_order_id, idempotency_key: null },
          'h1',
        );
        if (reserved.outcome !== 'reserved') throw new Error(reserved.outcome);
        return store.orderPayments.create(payment, reserved.reservation);
      }),
    );
    expect(results.map((result) => result.outcome)).toEqual(Array(9).fill('created'));

    const plan = plans.at(-1)!;
    const nodes: PlanNode[] = [];
    const walk = (node: PlanNode) => {
      nodes.push(node);
      node.Plans?.forEach(walk);
    };
    walk(plan);
    const run = nodes.filter((node) => node['Actual Loops'] > 0);
    const label = (node: PlanNode) => `${node['Node Type']} ${node['Relation Name'] ?? ''}`.trim();
    // No node runs once per row of another (a join of the batch with itself): only the key lookups repeat, one per key.
    expect(run.filter((node) => node['Actual Loops'] > 1 && node['Relation Name'] !== 'idempotency_keys').map(label)).toEqual([]);
    // order_payments is written by the insert and read by nothing: the rows on record are looked up only when the insert skipped one.
    expect(run.filter((node) => node['Relation Name'] === 'order_payments' && node['Node Type'] !== 'ModifyTable').map(label)).toEqual([]);
    // The requests' JSON is read once (into the insert), the keys' once.
    expect(run.filter((node) => node['Node Type'] === 'Function Scan')).toHaveLength(2);
  });
});
