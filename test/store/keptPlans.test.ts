import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, quoteIdentifier, type Db, type PreparedStatement } from '../../src/platform/store/db.js';
import { createStore } from '../../src/platform/store/index.js';
import { backends, openTimeoutMs, testDatabaseTimeouts, type TestDatabase } from '../support/databases.js';
import { manualClock, newOrderPayment, seconds } from './fixtures.js';

// A named statement's plan is made once per connection and kept (ADR 0013): made here while the
// tables are empty, as at a platform's start, it must still look a batch's rows up by key when
// the tables hold millions. Forcing the generic plan makes the kept plan the one EXPLAIN shows.
const postgres = backends.find((backend) => backend.name === 'postgres')!;

/** E1's batched statements, whose kept plans must reach their tables by key. */
const batched = ['store.idempotency.reserve', 'store.orderPayments.record'];

describe.skipIf(postgres.skip)('kept plans of the batched statements (postgres)', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await postgres.open();
    const [{ schema }] = (await database.db.query<{ schema: string }>('SELECT current_schema() AS schema')) as [{ schema: string }];
    // One connection, so every statement and the EXPLAINs below share its kept plans.
    db = await openPostgres(process.env.DATABASE_URL!, { schema, maxConnections: 1, timeouts: testDatabaseTimeouts });
    await db.query('SET plan_cache_mode = force_generic_plan');
  }, openTimeoutMs);
  afterAll(async () => {
    await db?.close();
    await database?.dispose();
  }, openTimeoutMs);

  it('look each row up by its key, never by reading a whole table, though planned on empty tables', async () => {
    const clock = manualClock();
    const store = createStore(db, { clock: clock.now, idempotencyStaleAfterMs: seconds(30) });
    // An E1 with both keys: its reservation and its record.
    const payment = newOrderPayment();
    const reserved = await store.idempotency.reserve(
      { app_id: payment.app_id, client_id: payment.client_id, miniapp_order_id: payment.miniapp_order_id, idempotency_key: 'k1' },
      'h1',
    );
    if (reserved.outcome !== 'reserved') throw new Error(reserved.outcome);
    expect((await store.orderPayments.create(payment, reserved.reservation)).outcome).toBe('created');

    for (const name of batched) {
      const [kept] = await db.query<{ parameters: number; generic_plans: string }>(
        'SELECT cardinality(parameter_types) AS parameters, generic_plans FROM pg_prepared_statements WHERE name = $1',
        [name],
      );
      expect(kept, `${name} is a named statement, its plan kept by the connection`).toBeDefined();
      expect(Number(kept!.generic_plans)).toBeGreaterThan(0);
      const plan = (
        await db.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN EXECUTE ${quoteIdentifier(name)}(${Array(kept!.parameters).fill('NULL').join(', ')})`,
        )
      )
        .map((row) => row['QUERY PLAN'])
        .join('\n');
      expect(plan, name).toMatch(/Index|Conflict Arbiter/);
      expect(plan, name).not.toMatch(/Seq Scan on (order_payments|idempotency_keys|deliveries)\b/);
    }
  });

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
    const literal = (value: unknown) => (typeof value === 'number' ? String(value) : `'${String(value).replaceAll("'", "''")}'`);
    const explaining: Db = {
      ...db,
      async query<T>(sql: string | PreparedStatement, params?: readonly unknown[]): Promise<T[]> {
        if (typeof sql !== 'string' && sql.name === 'store.orderPayments.record' && (await prepared(sql.name))) {
          await db
            .transaction(async (tx) => {
              const [row] = await tx.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
                `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ${quoteIdentifier(sql.name)}(${params!.map(literal).join(', ')})`,
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
