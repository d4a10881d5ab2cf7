import { describe, expect, it } from 'vitest';
import { paymentProblems } from '../../bench/paths.js';
import { drainProblems, e1Problems, splitProblems } from '../../bench/twoInstances.js';

describe("the bench's correctness checks", () => {
  describe('a payment run', () => {
    const arrivals = (...ids: string[]) => ids.map((orderPaymentId) => ({ orderPaymentId }));
    const ledger = (...sent: string[]) => ({ sentEver: new Set(sent), arrivedEver: new Map<string, number>() });

    it('passes when every accepted E5 has one E6, counting an E5 cut off unanswered whose E6 came', () => {
      const check = paymentProblems(ledger('a', 'b', 'c'), new Set(['a', 'b', 'c']), new Set(['a', 'b']), arrivals('b', 'a', 'c'));
      expect(check).toEqual({ completed: 3, problems: [] });
    });

    it("takes a late E6 of an earlier run's payment as no phantom, and does not count it for this run", () => {
      const check = paymentProblems(ledger('old', 'a'), new Set(['a']), new Set(['a']), arrivals('old', 'a'));
      expect(check).toEqual({ completed: 1, problems: [] });
    });

    it('reports an accepted E5 whose E6 never came (a lost write)', () => {
      expect(paymentProblems(ledger('a', 'b'), new Set(['a', 'b']), new Set(['a', 'b']), arrivals('a')).problems).toEqual([
        '1 accepted E5 without an E6',
      ]);
    });

    it('reports a payment that got two E6s, in one run or in two, and an E6 for a payment never completed', () => {
      const shared = ledger('a', 'b');
      expect(paymentProblems(shared, new Set(['a']), new Set(['a']), arrivals('a', 'a', 'z')).problems).toEqual([
        '1 E6 for payments no E5 was sent for',
        '1 payments got more than one E6',
      ]);
      expect(paymentProblems(shared, new Set(['b']), new Set(['b']), arrivals('b')).problems).toEqual([]);
      expect(paymentProblems(shared, new Set([]), new Set([]), arrivals('b')).problems).toEqual(['1 payments got more than one E6']);
    });
  });

  describe('two instances', () => {
    const set = (...ids: string[]) => new Set(ids);
    const recorded = (...ids: string[]) => new Map(ids.map((id) => [id, 1]));

    it('accepts E1s all recorded once with their keys done, an E1 cut off unanswered but recorded included', () => {
      expect(e1Problems({ sent: set('a', 'b', 'c'), accepted: set('a', 'b'), recorded: recorded('a', 'b', 'c'), pendingKeys: 0 })).toEqual(
        [],
      );
    });

    it('reports a lost write, a payment for an order never sent, an order recorded twice and pending keys', () => {
      expect(e1Problems({ sent: set('a', 'b'), accepted: set('a', 'b'), recorded: recorded('a'), pendingKeys: 0 })).toEqual([
        '1 accepted E1 not recorded (lost writes)',
      ]);
      expect(
        e1Problems({
          sent: set('a'),
          accepted: set('a'),
          recorded: new Map([
            ['a', 2],
            ['z', 1],
          ]),
          pendingKeys: 2,
        }),
      ).toEqual(['1 payments recorded for orders never sent', '1 orders recorded twice', '2 idempotency keys left pending']);
    });

    it('accepts a drain where every queued E6 arrived once and was recorded once', () => {
      expect(drainProblems({ queued: 5, distinct: 5, duplicates: 0, delivered: 5, attempts: 5 })).toEqual([]);
    });

    it('reports a duplicate E6, a missing one, and records that disagree with the arrivals', () => {
      expect(drainProblems({ queued: 5, distinct: 5, duplicates: 1, delivered: 5, attempts: 6 })).toEqual([
        '1 E6 delivered twice',
        '6 attempts recorded for 5 deliveries',
      ]);
      expect(drainProblems({ queued: 5, distinct: 4, duplicates: 0, delivered: 5, attempts: 5 })).toEqual([
        '1 queued E6 never arrived',
        '4 E6 arrived but 5 recorded delivered',
      ]);
    });

    it('reports an instance the proxy never reached', () => {
      expect(splitProblems([10, 12])).toEqual([]);
      expect(splitProblems([22, 0])).toEqual(['an instance served nothing (22 + 0)']);
      expect(splitProblems([22])).toEqual([]);
    });
  });
});
