import { describe, expect, it } from 'vitest';
import { lsnBytes } from '../../bench/postgres.js';
import { addedRatio, agreement, median, pairedRatio, ratioOfMedians, roundOrder, spread } from '../../bench/stats.js';

describe('bench statistics', () => {
  it('takes the median of odd and even counts and ignores figures that were not measured', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, Number.NaN, 1, Number.POSITIVE_INFINITY, 3])).toBe(3);
    expect(median([])).toBeNaN();
  });

  it('reports the spread of the finite figures and how many there were', () => {
    expect(spread([0.9, 0.8, 1.1, Number.NaN])).toEqual({ median: 0.9, min: 0.8, max: 1.1, n: 3 });
    expect(spread([]).n).toBe(0);
  });

  it('pairs a ratio by round, so a machine slowing down between rounds does not move it', () => {
    // The machine halves its speed after round 1; both contenders slow down alike.
    const a = [100, 50, 50, 100];
    const b = [200, 100, 100, 200];
    const ratio = pairedRatio(a, b);
    expect(ratio.pairs).toEqual([0.5, 0.5, 0.5, 0.5]);
    expect(ratio.median).toBe(0.5);
    // The ratio of medians taken separately would be 75 / 150 too here, but pairing is what keeps
    // a round where only one side stalled from dragging the other side's figure with it.
    const stalled = pairedRatio([100, 10, 100], [200, 200, 200]);
    expect(stalled.median).toBe(0.5);
    expect(stalled.min).toBe(0.05);
  });

  it('skips a round where either side is missing or the reference is not positive', () => {
    const ratio = pairedRatio([1, 2, undefined, 4, 5], [2, 0, 3, -1, 10]);
    expect(ratio.pairs).toEqual([0.5, 0.5]);
    expect(ratio.n).toBe(2);
  });

  it('alternates the order of the contenders round by round', () => {
    expect(roundOrder(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(roundOrder(['a', 'b', 'c'], 1)).toEqual(['c', 'b', 'a']);
    expect(roundOrder(['a', 'b', 'c'], 2)).toEqual(['a', 'b', 'c']);
  });

  it('takes the latency one contender adds over a reference against what the limit adds, and nothing when the limit adds none', () => {
    expect(addedRatio(12, 7, 2)).toBe(2);
    expect(addedRatio(2, 7, 2)).toBe(0);
    expect(addedRatio(12, 2, 2)).toBeNaN();
    expect(addedRatio(12, 1.5, 2)).toBeNaN();
    expect(addedRatio(12, 7, Number.NaN)).toBeNaN();
  });

  it('divides the medians of unpaired rounds, whatever order the rounds came in', () => {
    expect(ratioOfMedians([5.3, 4.1, 3.7], [1.9, 2.3, 2.0])).toBeCloseTo(4.1 / 2.0);
    expect(ratioOfMedians([4.1, 5.3, 3.7], [2.3, 2.0, 1.9])).toBeCloseTo(4.1 / 2.0);
    expect(ratioOfMedians([1], [])).toBeNaN();
    expect(ratioOfMedians([1], [0])).toBeNaN();
  });

  it('says two runs agree when the second is within ±10% of the first, and not beyond', () => {
    expect(agreement('x', 1, 1.1).agrees).toBe(true);
    expect(agreement('x', 1, 0.9).agrees).toBe(true);
    expect(agreement('x', 1, 1.11).agrees).toBe(false);
    expect(agreement('x', 1, 0.89).agrees).toBe(false);
    expect(agreement('x', 2, 1.9).difference).toBeCloseTo(-0.05);
    expect(agreement('x', Number.NaN, 1).agrees).toBe(false);
    expect(agreement('x', 0, 1).agrees).toBe(false);
  });

  it('reads a WAL position as bytes, so a difference of two is the WAL written between them', () => {
    expect(lsnBytes('0/0')).toBe(0n);
    expect(lsnBytes('0/FF')).toBe(255n);
    expect(lsnBytes('1/0') - lsnBytes('0/FFFFFFFF')).toBe(1n);
    expect(lsnBytes('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(() => lsnBytes('not a position')).toThrow(/not a WAL position/);
  });
});
