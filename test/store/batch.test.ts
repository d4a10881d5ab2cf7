/**
 * The store's one batcher (ADR 0021, 0031, 0033): concurrent items share a statement, a failed
 * statement is retried item by item so an item fails only for its own fault, those retries keep
 * to the batcher's statements in flight, with gatherTurn an idle batcher first gathers the items
 * of the current event-loop turn, and a batch run in rounds that fails after a round committed
 * keeps what that round answered.
 */
import { expect, test } from 'vitest';
import { batched, inRounds } from '../../src/platform/store/batch.js';

/** A batcher whose batches run in rounds by each item's first letter, the statement failing as `fails` says. */
function roundsBatcher(fails: (items: string[], statement: number) => boolean, maxRounds?: number) {
  const statements: string[][] = [];
  const write = batched<string, string>(
    (items) =>
      inRounds(
        items,
        (item) => [item[0]!],
        async (round) => {
          statements.push(round);
          if (fails(round, statements.length)) throw new DatabaseDown();
          return round.map((item) => `committed ${item}`);
        },
        maxRounds,
      ),
    { maxInFlight: 1, maxBatch: 128, gatherTurn: true },
  );
  return { write, statements };
}

class DatabaseDown extends Error {}

const outcomes = (results: PromiseSettledResult<string>[]) =>
  results.map((result) => (result.status === 'fulfilled' ? result.value : result.reason));

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

test("a batch that fails after a round committed answers that round's items as committed and retries only the rest", async () => {
  // Two items for row x and one for row y: round one carries x1 and y and commits, round two (x2) fails.
  const { write, statements } = roundsBatcher((_round, statement) => statement === 2);
  const results = await Promise.allSettled(['x1', 'x2', 'y'].map((item) => write(item)));
  expect(outcomes(results)).toEqual(['committed x1', 'committed x2', 'committed y']);
  // Only x2 is sent again; x1 and y are not decided a second time on a state holding their own change.
  expect(statements).toEqual([['x1', 'y'], ['x2'], ['x2']]);
});

test('an item that fails on its own is refused with the failure itself, whichever round it failed in', async () => {
  const { write, statements } = roundsBatcher((round) => round.includes('x2'));
  const results = await Promise.allSettled(['x1', 'x2', 'y'].map((item) => write(item)));
  expect(results[0]).toEqual({ status: 'fulfilled', value: 'committed x1' });
  expect(results[2]).toEqual({ status: 'fulfilled', value: 'committed y' });
  // The cause, not a wrapper: callers tell a database outage from other failures by its class.
  expect(results[1]).toMatchObject({ status: 'rejected' });
  expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(DatabaseDown);
  expect(statements).toEqual([['x1', 'y'], ['x2'], ['x2']]);
  // A failure in the first round decides nothing: every item is retried on its own.
  const first = roundsBatcher((round, statement) => statement === 1 || round.includes('y'));
  const again = await Promise.allSettled(['x1', 'y'].map((item) => first.write(item)));
  expect(again[0]).toEqual({ status: 'fulfilled', value: 'committed x1' });
  expect((again[1] as PromiseRejectedResult).reason).toBeInstanceOf(DatabaseDown);
  expect(first.statements).toEqual([['x1', 'y'], ['x1'], ['y']]);
});

test('items still undecided after the last round are retried on their own; those decided keep their answers', async () => {
  // Three items for one row and two rounds at most: x3 is left over.
  const { write, statements } = roundsBatcher(() => false, 2);
  const results = await Promise.allSettled(['x1', 'x2', 'x3', 'y'].map((item) => write(item)));
  expect(outcomes(results)).toEqual(['committed x1', 'committed x2', 'committed x3', 'committed y']);
  expect(statements).toEqual([['x1', 'y'], ['x2'], ['x3']]);
});
