/**
 * The typed client writes request bodies without lossless-json (its one dependency is openapi-fetch,
 * ADR 0042): its writer must give the same text as the platform's stringifyLossless for every JSON
 * value, LosslessNumbers with more digits than a double holds included.
 */
import fc from 'fast-check';
import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { parseLossless, stringifyLossless } from '../../src/contract/json.js';
import { losslessBody } from '../../src/shipped/clients/losslessBody.js';

const longNumber = fc
  .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 40n }), fc.option(fc.nat({ max: 999_999 })))
  .map(([negative, whole, fraction]) => new LosslessNumber(`${negative ? '-' : ''}${whole}${fraction === null ? '' : `.${fraction}`}`));

const body = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.string(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    longNumber,
    fc.bigInt(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('losslessBody', () => {
  it('writes what stringifyLossless writes, for any JSON value with LosslessNumbers and bigints', () => {
    fc.assert(
      fc.property(body, (value) => {
        expect(losslessBody(value)).toBe(stringifyLossless(value));
      }),
      { seed: 42_025, numRuns: 500 },
    );
  });

  it('keeps the digits parseLossless read and leaves out undefined members as JSON does', () => {
    const read = parseLossless('{"amount":123456789012345678901234.5,"n":[1e400,-0.10]}') as Record<string, unknown>;
    expect(losslessBody({ ...read, gone: undefined, when: new Date(0) })).toBe(
      '{"amount":123456789012345678901234.5,"n":[1e400,-0.10],"when":"1970-01-01T00:00:00.000Z"}',
    );
  });

  it('refuses what is not JSON: a body that contains itself, a forged lossless number, nothing at all', () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => losslessBody(loop)).toThrow(TypeError);
    expect(() => losslessBody({ [Symbol.for('lossless-json.LosslessNumber')]: true, value: '1,0' })).toThrow(TypeError);
    expect(() => losslessBody(undefined)).toThrow(TypeError);
  });
});
