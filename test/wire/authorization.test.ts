import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { basicAuthorization, prefixedAuthorization } from '../../src/wire/authorization.js';
import { readCredentials } from '../../src/wire/credentials.js';
import { propertyRunOptions } from '../support/properties.js';

// The header values are written without Node's Buffer (the client runs on any fetch runtime):
// they must stay byte for byte what RFC 7617 asks, base64 of the UTF-8 of `id:secret`.
describe('Authorization values', () => {
  test('are base64 of the UTF-8 bytes of id:secret, for any text, and read back as sent', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 1 }),
        fc.string({ unit: 'grapheme' }),
        fc.constantFrom('Token', 'Bearer', 'X'),
        (id, secret, prefix) => {
          fc.pre(!id.includes(':'));
          const expected = Buffer.from(`${id}:${secret}`, 'utf8').toString('base64');
          expect(basicAuthorization(id, secret)).toBe(`Basic ${expected}`);
          expect(prefixedAuthorization(prefix, id, secret)).toBe(`${prefix} ${expected}`);
          expect(readCredentials(basicAuthorization(id, secret))).toEqual({ scheme: 'Basic', id, secret });
        },
      ),
      propertyRunOptions('authorization', 500),
    );
  });

  test('match fixed vectors', () => {
    expect(basicAuthorization('Aladdin', 'open sesame')).toBe('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==');
    expect(basicAuthorization('test', '123£')).toBe('Basic dGVzdDoxMjPCow=='); // RFC 7617 §2.1's UTF-8 example
    expect(prefixedAuthorization('Token', 'ha_superapp', 's')).toBe('Token aGFfc3VwZXJhcHA6cw==');
  });
});
