/**
 * The arithmetic the benchmark's verdicts rest on: medians of interleaved rounds, the ratio of two
 * contenders as the median of their per-round pairs with its spread, and whether two runs agree.
 * Pure functions, tested in test/bench/stats.test.ts.
 */

/** The median of `values` (the mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return Number.NaN;
  const sorted = [...finite].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** A figure measured in several rounds: its median, its range and how many rounds gave one. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

/** Median, range and count of the finite values (NaN figures when there are none). */
export function spread(values: readonly number[]): Spread {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), n: finite.length };
}

/**
 * The ratio of `a` to `b` measured in the same rounds: one ratio per round where both were
 * measured and `b` is positive, then their median and range. Pairing by round is what keeps the
 * machine's drift out of the ratio: both sides of a pair ran seconds apart.
 */
export function pairedRatio(a: readonly (number | undefined)[], b: readonly (number | undefined)[]): Spread & { pairs: number[] } {
  const pairs: number[] = [];
  for (let round = 0; round < Math.min(a.length, b.length); round++) {
    const top = a[round];
    const bottom = b[round];
    if (top === undefined || bottom === undefined || !Number.isFinite(top) || !Number.isFinite(bottom) || bottom <= 0) continue;
    pairs.push(top / bottom);
  }
  return { ...spread(pairs), pairs };
}

/**
 * How much more `subject` adds over `reference` than `limit` does, each figure taken over all of
 * a contender's rounds together (a tail percentile of every request, bench/README.md): NaN when
 * the limit adds nothing, where the ratio says nothing.
 */
export function addedRatio(subject: number, limit: number, reference: number): number {
  const limitAdded = limit - reference;
  return Number.isFinite(limitAdded) && limitAdded > 0 ? (subject - reference) / limitAdded : Number.NaN;
}

/**
 * The ratio of two contenders' medians over their rounds, for figures whose rounds are not
 * paired in time (bench/README.md); NaN when either has none or `b`'s is not positive.
 */
export function ratioOfMedians(a: readonly number[], b: readonly number[]): number {
  const bottom = median(b);
  return bottom > 0 ? median(a) / bottom : Number.NaN;
}

/**
 * The order of the contenders in round `round`: as given in even rounds, reversed in odd ones
 * (A B C, C B A, A B C …), so a drift that runs through a round favours no contender overall.
 */
export function roundOrder<T>(contenders: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...contenders] : [...contenders].reverse();
}

/** Whether two measurements of one ratio agree: the second within ±tolerance of the first. */
export interface Agreement {
  name: string;
  first: number;
  second: number;
  /** second ÷ first − 1. */
  difference: number;
  agrees: boolean;
}

export function agreement(name: string, first: number, second: number, tolerance = 0.1): Agreement {
  const difference = second / first - 1;
  // 1.1 / 1 - 1 is 0.10000000000000009 in binary floating point: a figure exactly on the line agrees.
  const agrees = Number.isFinite(difference) && Math.abs(difference) <= tolerance + 1e-9;
  return { name, first, second, difference, agrees };
}
