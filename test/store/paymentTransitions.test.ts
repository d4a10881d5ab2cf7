import { describe, expect, it } from 'vitest';
import { decideTransition } from '../../src/platform/store/paymentTransitions.js';

describe('decideTransition', () => {
  it.each([
    ['in_process', 'paid', 'apply'],
    ['in_process', 'cancelled', 'apply'],
    ['in_process', 'failed', 'apply'],
    ['in_process', 'in_process', 'unchanged'],
    ['paid', 'paid', 'unchanged'],
    ['cancelled', 'cancelled', 'unchanged'],
    ['failed', 'failed', 'unchanged'],
    ['paid', 'in_process', 'conflict'],
    ['paid', 'cancelled', 'conflict'],
    ['cancelled', 'failed', 'conflict'],
    ['failed', 'paid', 'conflict'],
  ] as const)('%s -> %s: %s', (current, requested, decision) => {
    expect(decideTransition(current, requested)).toBe(decision);
  });
});
