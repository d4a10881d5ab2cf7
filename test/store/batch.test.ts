/**
 * The E1 write batcher (issue 12, ADR 0021, 0031): concurrent items share a statement, a failed
 * statement is retried item by item so an item fails only for its own fault, and those retries
 * keep to the batcher's statements in flight.
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
