/**
 * The store's one batcher (ADR 0021, 0031, 0033): concurrent items share a statement, a failed
 * statement is retried item by item so an item fails only for its own fault, those retries keep
 * to the batcher's statements in flight, and with gatherTurn an idle batcher first gathers the
 * items of the current event-loop turn.
 */
import { expect, test } from 'vitest';
import { batched } from '../../src/platform/store/batch.js';

test('a failed batch is retried one item after another, never more statements at once than maxInFlight', async () => {
  let running = 0;
  let mostAtOnce = 0;
  const statements: number[][] = [];
  const write = batched<number, string>(
    async (items) => {
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      statements.push(items);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      if (items.length > 1 || items[0] === 3) throw new Error('refused');
      return items.map((item) => `ok ${item}`);
    },
    { maxInFlight: 1, maxBatch: 128 },
  );
  const results = await Promise.allSettled([1, 2, 3, 4, 5].map((item) => write(item)));
  expect(results.map((result) => (result.status === 'fulfilled' ? result.value : 'failed'))).toEqual([
    'ok 1',
    'ok 2',
    'failed',
    'ok 4',
    'ok 5',
  ]);
  // The first item went alone; the four behind it shared a statement, which failed and was retried item by item.
  expect(statements).toEqual([[1], [2, 3, 4, 5], [2], [3], [4], [5]]);
  expect(mostAtOnce).toBe(1);
});

test('gatherTurn: the items of one turn go out together into an idle batcher; later ones wait for the statement in flight', async () => {
  const statements: number[][] = [];
  let release!: () => void;
  const write = batched<number, number>(
    async (items) => {
      statements.push(items);
      if (statements.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return items;
    },
    { maxInFlight: 1, maxBatch: 128, gatherTurn: true },
  );
  const first = [write(1), write(2), write(3)];
  await new Promise((resolve) => setImmediate(resolve));
  expect(statements).toEqual([[1, 2, 3]]);
  const second = [write(4), write(5)];
  await new Promise((resolve) => setImmediate(resolve));
  // The first statement is still in flight: the next waits for it, not for a turn.
  expect(statements).toEqual([[1, 2, 3]]);
  release();
  expect(await Promise.all([...first, ...second])).toEqual([1, 2, 3, 4, 5]);
  expect(statements).toEqual([
    [1, 2, 3],
    [4, 5],
  ]);
  // Without gatherTurn the first item of an idle batcher goes alone, at once.
  const eager: number[][] = [];
  const now = batched<number, number>(
    async (items) => {
      eager.push(items);
      return items;
    },
    { maxInFlight: 1, maxBatch: 128 },
  );
  await Promise.all([now(1), now(2), now(3)]);
  expect(eager[0]).toEqual([1]);
});
