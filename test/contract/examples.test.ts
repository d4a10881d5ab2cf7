import { describe, expect, test } from 'vitest';
import { API_NAMES } from '../../src/contract/documents.js';
import { copyJson, withRawAt } from '../../src/contract/jsonPath.js';
import { loadLosslessDocument } from '../../src/contract/losslessDocument.js';
import { check } from '../../src/contract/operations.js';
import { contractExamples } from '../support/contract-examples.js';

const examples = contractExamples();

describe('every example of the contract matches its schema', () => {
  test.each(examples.map((example) => [example.name, example] as const))('%s', (_name, example) => {
    const result = check(example.validate, example.value);
    expect(result.valid ? 'valid' : result.message).toBe('valid');
  });
});

describe('the example check itself', () => {
  test('finds examples of every kind', () => {
    const kinds = ['request body', 'response 200', 'response 400', 'parameter', 'schema'];
    for (const kind of kinds)
      expect(
        examples.some((example) => example.name.includes(` ${kind}`)),
        kind,
      ).toBe(true);
  });

  test('checks every example component of every document', () => {
    for (const api of API_NAMES) {
      const components = Object.keys(loadLosslessDocument(api).components.examples ?? {});
      const checked = new Set(examples.filter((example) => example.api === api).map((example) => example.component));
      expect(
        components.filter((name) => !checked.has(name)),
        api,
      ).toEqual([]);
    }
  });

  test('fails on a broken copy of an example (a digit too many after the point)', () => {
    const full = examples.find((example) => example.name === 'platform createOrderPayment request body (application/json) example full');
    expect(full).toBeDefined();
    expect(check(full!.validate, copyJson(full!.value)).valid).toBe(true);
    const broken = withRawAt(full!.value, ['order', 'amount'], '250000.001');
    const result = check(full!.validate, broken);
    expect(result.valid).toBe(false);
    expect(result.valid ? '' : result.message).toContain('order.amount');
  });

  test('fails on a broken copy of an example (a required field dropped)', () => {
    const paid = examples.find((example) => example.name === 'platform completeOrder request body (application/json) example paid');
    expect(paid).toBeDefined();
    const broken = copyJson(paid!.value) as Record<string, unknown>;
    delete broken.payment_status;
    expect(check(paid!.validate, broken)).toMatchObject({ valid: false, message: 'payment_status is required' });
  });
});
