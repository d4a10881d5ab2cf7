/**
 * The embedded database on a thread of its own (ADR 0047): what the store sees is PGlite's own
 * behaviour, whatever thread answers it: values and errors as PGlite gives them, statements in
 * the order sent, a transaction holding the database until its end, and a closed database
 * failing as PGlite does, so availability (ADR 0037) reads it the same way.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUnavailable } from '../../src/platform/store/availability.js';
import { createPglite, isUniqueViolation } from '../../src/platform/store/db.js';
import { pgliteTemplateArchive } from '../../src/platform/store/pgliteCluster.js';
import type { EmbeddedPglite } from '../../src/platform/store/pgliteThread.js';

const run = promisify(execFile);
const fresh = async () => createPglite('memory://', await pgliteTemplateArchive());

describe('PGlite on its own thread', () => {
  let pglite: EmbeddedPglite;
  beforeAll(async () => {
    pglite = await fresh();
    await pglite.exec(`CREATE TABLE thread_rows (id int PRIMARY KEY, amount numeric, at timestamptz, bytes bytea, doc jsonb, note text)`);
  }, 60_000);
  afterAll(() => pglite?.close());

  it('gives back values and errors as PGlite gives them', async () => {
    const at = new Date('2026-11-28T01:02:03.456Z');
    await pglite.query('INSERT INTO thread_rows VALUES ($1, $2, $3, $4, $5, $6)', [
      1,
      '12345678901234567.89',
      at,
      new Uint8Array([0, 255, 7]),
      JSON.stringify({ a: [1, 'b'] }),
      null,
    ]);
    const { rows } = await pglite.query<Record<string, unknown>>('SELECT * FROM thread_rows WHERE id = $1', [1]);
    expect(rows).toEqual([
      { id: 1, amount: '12345678901234567.89', at, bytes: new Uint8Array([0, 255, 7]), doc: { a: [1, 'b'] }, note: null },
    ]);
    expect(rows[0]!.at).toBeInstanceOf(Date);

    const duplicate = await pglite.query('INSERT INTO thread_rows (id) VALUES (1)').catch((error: unknown) => error);
    expect(duplicate).toBeInstanceOf(Error);
    expect(duplicate).toMatchObject({ code: '23505', constraint: 'thread_rows_pkey', table: 'thread_rows' });
    expect((duplicate as Error).message).toMatch(/duplicate key value violates unique constraint "thread_rows_pkey"/);
    expect(isUniqueViolation(duplicate)).toBe(true);
    expect(isUnavailable(duplicate)).toBe(false);

    const syntax = await pglite.exec('SELEKT 1').catch((error: unknown) => error);
    expect(syntax).toMatchObject({ code: '42601' });
    // A parameter the thread cannot be sent fails that statement alone.
    await expect(pglite.query('SELECT $1::text', [() => 'x'])).rejects.toThrow(/could not be cloned/);
    expect((await pglite.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
  });

  it('runs statements in the order they were sent, without waiting for each answer', async () => {
    await pglite.exec('DELETE FROM thread_rows');
    const sent = Array.from({ length: 50 }, (_, index) =>
      pglite.query<{ n: number }>(`INSERT INTO thread_rows (id) VALUES ($1) RETURNING (SELECT count(*)::int FROM thread_rows) AS n`, [
        index,
      ]),
    );
    // Each insert sees every row sent before it: the thread ran them in the order they left.
    expect((await Promise.all(sent)).map((result) => result.rows[0]!.n)).toEqual(Array.from({ length: 50 }, (_, index) => index));
  });

  it('a transaction holds the database: a statement sent meanwhile runs after its commit, and a rollback leaves nothing', async () => {
    await pglite.exec('DELETE FROM thread_rows');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const order: string[] = [];
    const transaction = pglite.transaction(async (tx) => {
      await tx.query('INSERT INTO thread_rows (id) VALUES (10)');
      await held;
      await tx.query('INSERT INTO thread_rows (id) VALUES (11)');
      order.push('committing');
      return 'done';
    });
    // Sent while the transaction is open: it waits for the commit and sees both rows.
    const meanwhile = pglite.query<{ n: number }>('SELECT count(*)::int AS n FROM thread_rows').then((result) => {
      order.push('read');
      return result.rows[0]!.n;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(order).toEqual([]);
    release();
    await expect(transaction).resolves.toBe('done');
    await expect(meanwhile).resolves.toBe(2);
    expect(order).toEqual(['committing', 'read']);

    const refused = pglite
      .transaction(async (tx) => {
        await tx.query('INSERT INTO thread_rows (id) VALUES (12)');
        throw new Error('the caller changed its mind');
      })
      .catch((error: unknown) => error);
    expect(await refused).toMatchObject({ message: 'the caller changed its mind' });
    // A statement failing inside one rolls it back too, and the error is the statement's own.
    const failed = await pglite
      .transaction(async (tx) => {
        await tx.query('INSERT INTO thread_rows (id) VALUES (13)');
        await tx.query('INSERT INTO thread_rows (id) VALUES (10)');
      })
      .catch((error: unknown) => error);
    expect(isUniqueViolation(failed)).toBe(true);
    const { rows } = await pglite.query<{ id: number }>('SELECT id FROM thread_rows ORDER BY id');
    expect(rows.map((row) => row.id)).toEqual([10, 11]);
  });

  it('once closed, every statement fails as on a closed PGlite, which availability reads as the database down', async () => {
    const closing = await fresh();
    const waiting = closing.query('SELECT pg_sleep(0.2)');
    await closing.close();
    await waiting.catch(() => undefined);
    expect(closing.closed).toBe(true);
    const refused = await closing.query('SELECT 1').catch((error: unknown) => error);
    expect(refused).toMatchObject({ message: 'PGlite is closed' });
    expect(isUnavailable(refused)).toBe(true);
    await expect(closing.close()).resolves.toBeUndefined();
  }, 60_000);

  it('an open database nobody uses holds no process up', async () => {
    const scratch = await mkdtemp(join(os.tmpdir(), 'minibridge-thread-'));
    try {
      const script = join(scratch, 'open.mts');
      const module = new URL('../../src/platform/store/db.ts', import.meta.url).href;
      const cluster = new URL('../../src/platform/store/pgliteCluster.ts', import.meta.url).href;
      await writeFile(
        script,
        `import { createPglite } from ${JSON.stringify(module)};
import { pgliteTemplateArchive } from ${JSON.stringify(cluster)};
const pglite = await createPglite('memory://', await pgliteTemplateArchive());
const { rows } = await pglite.query('SELECT 41 + 1 AS answer');
console.log(rows[0].answer);
`,
      );
      // Left open on purpose: the process ends when its work does, as with PGlite on its own thread.
      const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { timeout: 60_000 });
      expect(stdout.trim()).toBe('42');
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 90_000);
});
