import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { compareDecimals, decimalViolation } from '../../src/contract/decimal.js';
import { loadDocument } from '../../src/contract/documents.js';
import { parseLossless } from '../../src/contract/json.js';
import { check, schemaValidator } from '../../src/contract/operations.js';
import { propertyRunOptions } from '../support/properties.js';

/** The exact value of a plain decimal as an integer count of 10^-scale units. */
function scaled(text: string, scale: number): bigint {
  const [, sign, integer, fraction = ''] = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text)!;
  const units = BigInt(integer! + fraction.padEnd(scale, '0'));
  return sign ? -units : units;
}

const decimalText = fc
  .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 22n }), fc.option(fc.stringMatching(/^\d{1,8}$/), { nil: undefined }))
  .map(([negative, integer, fraction]) => `${negative ? '-' : ''}${integer}${fraction === undefined ? '' : `.${fraction}`}`);

describe('decimals compared exactly (x-decimal)', () => {
  test('compareDecimals orders any two plain decimals as their exact values do', () => {
    fc.assert(
      fc.property(decimalText, decimalText, (a, b) => {
        const difference = scaled(a, 8) - scaled(b, 8);
        expect(compareDecimals(a, b)).toBe(difference === 0n ? 0 : difference < 0n ? -1 : 1);
      }),
      propertyRunOptions('compareDecimals', 2000),
    );
  });

  test('a range is judged exactly, with the bounds of every rule', () => {
    const rule = { precision: 30, scale: 8, minimum: '-12.5', maximum: '99999999999999999999.99' };
    fc.assert(
      fc.property(decimalText, (text) => {
        const value = scaled(text, 8);
        const inRange = value >= scaled(rule.minimum, 8) && value <= scaled(rule.maximum, 8);
        const violation = decimalViolation(text, rule);
        expect(violation === undefined || /digits/.test(violation)).toBe(inRange);
      }),
      propertyRunOptions('decimalViolation range', 2000),
    );
  });
});

describe('what a generic validator sees of a number amount (ADR 0038)', () => {
  test("the number branch documents the amounts a generic validator accepts and the platform refuses, and the platform's validator refuses each", () => {
    const decimal = loadDocument('platform').components.schemas!.Decimal as { anyOf: { type: string; description?: string }[] };
    const numberBranch = decimal.anyOf.find((branch) => branch.type === 'number')!;
    const generic = new Ajv2020({ strict: false }).compile(numberBranch);
    const order = schemaValidator('platform', 'CreateOrderPaymentOrder');
    for (const text of ['99.999', '0.001', '1e-7', '10.125']) {
      expect(numberBranch.description, text).toContain(`\`${text}\``);
      expect(generic(Number(text)), `a generic validator accepts ${text}`).toBe(true);
      expect(check(order, parseLossless(`{"currency":"VND","amount":${text}}`)).valid, `the platform refuses ${text}`).toBe(false);
    }
    // Why no multipleOf: in floating point it refuses valid amounts.
    expect(new Ajv2020().compile({ type: 'number', multipleOf: 0.01 })(1.15)).toBe(false);
    expect(numberBranch.description).toContain('`1.15`');
  });
});
