/**
 * The one JSON writer (json.ts, ADR 0045) remembers the quoted text of member names it has
 * written, since the same few names come on every request. The names come from partners (an
 * event's payload, an order, custom_attributes), any length up to the 1 MiB body: what is kept
 * must be bounded in bytes, not only in entries, or 1,024 events with a 1 MiB member name each
 * would hold 2 GiB for the life of the process. Measured on the heap after a collection.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, test } from 'vitest';
import { canonicalJsonText, stringifyLossless } from '../../src/contract/json.js';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

function heapAfterCollection(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

const MIB = 1 << 20;

test.each([
  ['stringifyLossless', stringifyLossless],
  ['canonicalJsonText', canonicalJsonText],
])('%s keeps nothing of long member names once written', (label, write) => {
  const before = heapAfterCollection();
  for (let index = 0; index < 64; index++) {
    const name = `${label}${index}`.padEnd(MIB, 'x');
    expect(write({ [name]: 1 })).toHaveLength(MIB + 6);
  }
  // 64 names of 1 MiB each: 128 MiB if each name and its quoted text were kept.
  expect(heapAfterCollection() - before).toBeLessThan(16 * MIB);
});

test('short names are still written as JSON.stringify quotes them', () => {
  const value = { currency: 'VND', 'quo"te': 1, '\u2028': 2, '\ud800': 3, __proto__: null } as Record<string, unknown>;
  Object.defineProperty(value, '__proto__', { value: 4, enumerable: true });
  expect(stringifyLossless(value)).toBe(JSON.stringify(value));
  expect(stringifyLossless(value)).toBe(JSON.stringify(value));
});
