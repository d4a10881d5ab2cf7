import { describe, expect, it } from 'vitest';
import { brokenDecimals, longestDecimals, negativeCases, positiveCases } from '../../src/shipped/conformance/cases.js';
import { dotted } from '../../src/contract/jsonPath.js';
import { requestShape } from '../../src/shipped/conformance/requestShape.js';

const limitOf = (operationId: string, path: string) =>
  requestShape(operationId).locations.find((location) => dotted(location.path) === path)?.maxLength;
let counter = 0;
const options = {
  fixedPaths: [['app_id'], ['client_id']],
  filler: (length: number) => `f${++counter}z${'x'.repeat(length)}`.slice(0, length),
};

describe('requests made from the contract', () => {
  it('takes the smallest maxLength among allOf narrowings (E1 narrows what E3 allows)', () => {
    expect(limitOf('createOrderPayment', 'order.miniapp_order_id')).toBe(250);
    expect(limitOf('createHostappOrderPayment', 'order.miniapp_order_id')).toBe(255);
    expect(limitOf('createOrderPayment', 'order.items[0].product_image_url')).toBe(250);
    expect(limitOf('createHostappOrderPayment', 'order.items[0].product_image_url')).toBe(500);
  });

  it('builds 20-digit decimals and their one-step-too-far neighbours from x-decimal', () => {
    const money = { precision: 20, scale: 2, minimum: '0' };
    expect(longestDecimals(money)).toEqual(['12345678901234567890', '123456789012345678.12']);
    expect(brokenDecimals(money).map((broken) => broken.text)).toEqual(['123456789012345678901', '1.123', '-1']);
    expect(longestDecimals({ precision: 17, scale: 15, minimum: '-90', maximum: '90' })).toEqual(['12.123456789012345']);
  });

  it('sends every boundary value of E3 exactly, 20-digit numbers as raw JSON numbers', () => {
    const cases = positiveCases(requestShape('createHostappOrderPayment'), options);
    const amountAsNumber = cases.find((candidate) => candidate.label === 'order.amount with 20 digits as a number (12345678901234567890)')!;
    const body = amountAsNumber.apply(amountAsNumber.base) as { order: { amount: { value: string } } };
    expect(body.order.amount.value).toBe('12345678901234567890');
    const name = cases.find((candidate) => candidate.label.startsWith('order.items[0].product_name at its limit'))!;
    expect((name.apply(name.base) as { order: { items: Array<{ product_name: string }> } }).order.items[0]!.product_name).toHaveLength(250);
    expect(cases.some((candidate) => dotted(candidate.focus ?? []) === 'app_id')).toBe(false);
  });

  it('keeps only negative cases the contract itself refuses, one per rule', () => {
    const shape = requestShape('createHostappOrderPayment');
    const cases = negativeCases(shape, options);
    for (const candidate of cases) expect(shape.validate(candidate.apply(candidate.base)).valid, candidate.label).toBe(false);
    const labels = cases.map((candidate) => candidate.label);
    expect(labels).toContain('required order missing');
    expect(labels).toContain('order.items[0].product_name over its limit, String(250) + 1');
    expect(labels).toContain('order.amount with 3 decimals as a number (1.123)');
    expect(labels).toContain('order.items[0].quantity below its minimum 1 (0)');
  });
});
