import { memoryDatabases } from '../../src/platform/store/db.js';
import type { EmbeddedPglite as PGlite } from '../../src/platform/store/pgliteThread.js';

/**
 * Recycled `memory://` databases for the suites (ADR 0044). Booting a PGlite from the template
 * costs about 0.6 s of CPU, and the suites open about ninety; a worker's files share its process,
 * so a database one test closed is emptied back to the template's state and lent to the next.
 *
 * A lent database is indistinguishable from a fresh one, or it is not lent again:
 * - closing it closes the loan: the borrower's handle then fails as a closed PGlite does
 *   ("PGlite is closed"), never reaching the next borrower's data;
 * - it is emptied: any open transaction rolled back, the session reset (DISCARD ALL), every table
 *   truncated with its sequences restarted, and the template's own rows (the migrations applied,
 *   the statements' progress row) put back;
 * - then it is compared with the template: schemas, tables, columns, indexes, constraints,
 *   triggers, functions, sequences, statistics, roles, settings and the template's rows. Any
 *   difference (a test created a table, analysed one, ran a migration of its own) and it is
 *   closed instead; so is one that fails or takes too long to empty.
 */

/** Idle databases kept per worker; more are closed. */
const IDLE_LIMIT = 4;
/** Emptying takes milliseconds; a database stuck in a test's unfinished transaction is dropped. */
const RESET_LIMIT_MS = 5_000;

const idle: PGlite[] = [];
let template: Promise<string> | undefined;
let boot: (() => Promise<PGlite>) | undefined;

/** Counts for the suite's own test of the recycler. */
export const recycling = { booted: 0, lent: 0, recycled: 0, dropped: 0 };

/** Installs the recycler in this worker (once: later calls do nothing). */
export function recycleMemoryDatabases(): void {
  if (boot) return;
  boot = memoryDatabases.open;
  memoryDatabases.open = lendMemoryDatabase;
}

async function lendMemoryDatabase(): Promise<PGlite> {
  let database = idle.pop();
  if (!database) {
    database = await boot!();
    recycling.booted++;
    // The template's state, read once from a database nobody has used.
    template ??= stateOf(database);
    await template;
  }
  recycling.lent++;
  return loan(database);
}

/** `database` behind a handle whose close() ends the loan. */
function loan(database: PGlite): PGlite {
  let closed = false;
  let closing: Promise<void> | undefined;
  const refuse = () => Promise.reject(new Error('PGlite is closed'));
  return new Proxy(database, {
    get(target, property) {
      if (property === 'closed') return closed || target.closed;
      if (property === 'close') {
        return () => {
          closed = true;
          closing ??= giveBack(target);
          return closing;
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (closed ? refuse() : (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

async function giveBack(database: PGlite): Promise<void> {
  let kept = false;
  try {
    if (!database.closed && idle.length < IDLE_LIMIT) kept = await withLimit(emptied(database), RESET_LIMIT_MS);
  } catch {
    kept = false;
  }
  if (kept && idle.length < IDLE_LIMIT) {
    idle.push(database);
    recycling.recycled++;
    return;
  }
  recycling.dropped++;
  if (!database.closed)
    await withLimit(
      database.close().then(() => true),
      RESET_LIMIT_MS,
    ).catch(() => false);
}

function withLimit(work: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Empties `database` to the template's state; true when it then matches the template. */
async function emptied(database: PGlite): Promise<boolean> {
  // Apart: DISCARD ALL refuses to run inside the implicit transaction of a multi-statement query.
  await database.exec('ROLLBACK');
  await database.exec('DISCARD ALL');
  const seeds = JSON.parse(await template!) as State;
  const tables = await database.query<{ name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
      WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
  );
  if (tables.rows.length > 0) await database.exec(`TRUNCATE ${tables.rows.map((table) => table.name).join(', ')} RESTART IDENTITY CASCADE`);
  for (const [table, rows] of Object.entries(seeds.rows)) {
    await database.query(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::json)`, [JSON.stringify(rows)]);
  }
  return (await stateOf(database)) === (await template!);
}

interface State {
  catalog: unknown;
  rows: Record<string, unknown[]>;
}

/** Everything a test could observe of a database beyond its tables' rows, and the rows of the tables that have any. */
async function stateOf(database: PGlite): Promise<string> {
  const user = `NOT IN ('pg_catalog', 'information_schema', 'pg_toast')`;
  const catalog = await database.query<{ state: unknown }>(
    `SELECT json_build_array(
       (SELECT json_agg(nspname ORDER BY nspname) FROM pg_namespace),
       (SELECT json_agg(json_build_array(n.nspname, c.relname, c.relkind) ORDER BY n.nspname, c.relname)
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname ${user}),
       (SELECT json_agg(json_build_array(c.relname, a.attname, a.atttypid, a.attnotnull, a.atthasdef, a.attnum) ORDER BY c.relname, a.attnum)
          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname ${user} AND a.attnum > 0 AND NOT a.attisdropped),
       (SELECT json_agg(json_build_array(conname, contype, pg_get_constraintdef(oid)) ORDER BY conname, pg_get_constraintdef(oid))
          FROM pg_constraint WHERE connamespace IN (SELECT oid FROM pg_namespace WHERE nspname ${user})),
       (SELECT json_agg(indexdef ORDER BY indexdef) FROM pg_indexes WHERE schemaname ${user}),
       (SELECT json_agg(json_build_array(tgname, tgenabled) ORDER BY tgname, tgenabled) FROM pg_trigger WHERE NOT tgisinternal),
       (SELECT json_agg(md5(p.proname || pg_get_function_identity_arguments(p.oid) || p.prosrc) ORDER BY 1)
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname ${user}),
       (SELECT json_agg(json_build_array(schemaname, sequencename, last_value) ORDER BY schemaname, sequencename) FROM pg_sequences),
       (SELECT count(*) FROM pg_statistic s JOIN pg_class c ON c.oid = s.starelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname ${user}),
       (SELECT json_agg(rolname ORDER BY rolname) FROM pg_roles),
       (SELECT json_agg(json_build_array(setdatabase, setrole, setconfig) ORDER BY setdatabase, setrole) FROM pg_db_role_setting),
       (SELECT json_agg(extname ORDER BY extname) FROM pg_extension)
     ) AS state`,
  );
  const tables = await database.query<{ name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname ${user} ORDER BY 1`,
  );
  const rows: Record<string, unknown[]> = {};
  for (const { name } of tables.rows) {
    const found = await database.query<{ rows: unknown[] | null }>(`SELECT json_agg(t ORDER BY t::text) AS rows FROM ${name} t`);
    if (found.rows[0]?.rows) rows[name] = found.rows[0].rows;
  }
  return JSON.stringify({ catalog: catalog.rows[0]?.state, rows } satisfies State);
}
