/**
 * Every path and query parameter of every platform operation, fuzzed (ADR 0038): a value the API
 * did not make is refused with 400 `INVALID_REQUEST` in the contract's shape (or is a resource
 * that does not exist: 404), never answered 500 or 503, which a client obeying "retry later"
 * would retry for ever. A cursor the API did not make is always 400. Hand-picked hostile values
 * plus values fast-check draws with a fixed seed (PARAMETER_FUZZ_SEED, PARAMETER_FUZZ_RUNS).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { contractOperations, type OperationContract } from '../../src/contract/operations.js';
import { contractExamples } from '../support/contract-examples.js';
import { describeOnBackends } from '../support/databases.js';
import { ADMIN_TOKEN, HOSTAPP, MINIAPP, PlatformHarness } from '../support/platformHarness.js';

const SEED = Number(process.env.PARAMETER_FUZZ_SEED ?? 20261125);
const RUNS = Number(process.env.PARAMETER_FUZZ_RUNS ?? 25);

/** A value to put in a parameter: `text` is percent-encoded when sent, `raw` is sent as written. */
type Hostile = { text: string } | { raw: string };

const base64url = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64url');

/** Cursors this API never makes: base64url of text no partner id can be, or not base64url at all. */
const foreignCursors: Hostile[] = [
  base64url('\0'),
  base64url(Buffer.from([0xff])),
  base64url(Buffer.from([0xc0, 0xaf])),
  base64url('ha_test\0'),
  base64url('x'.repeat(151)),
  'AB',
  'AA=',
  'aGFfdGVzdA==',
  '-1',
  '',
  ' ',
  'ha_test',
].map((value) => (typeof value === 'string' ? { text: value } : value));

const hostile: Hostile[] = [
  ...['', ' ', '\0', 'a\0b', '\u0001', '\u007f', '\u200b', '\u202e', '😀', 'ℌ', '__proto__', 'constructor', 'toString'],
  ...['..', '.', '../admin', '%2e%2e', '-1', '0', '1e3', '1.5', '0x10', 'NaN', 'Infinity', '99999999999999999999999'],
  ...['00000000-0000-0000-0000-000000000000', '0B6E2F1C-8A43-4C55-9A7E-3F0E6F1C2D9B', 'pending ', 'PENDING', 'hostapp', 'HOSTAPPS'],
  ...['x'.repeat(251), 'x'.repeat(5000), "' OR 1=1 --", '${jndi:ldap://x}', '<script>', '\\', '/'],
]
  .map((text): Hostile => ({ text }))
  .concat(['%ED%A0%80', '%zz', '%', '%C0%AF', '%FF', '%00', '%2F'].map((raw) => ({ raw })))
  .concat(foreignCursors);

/** The valid value of each parameter, so the one under test is the only thing wrong with a request. */
function validValue(name: string): string {
  switch (name) {
    case 'partner_type':
      return 'hostapps';
    case 'partner_id':
    case 'client_id':
      return HOSTAPP.id;
    case 'app_id':
      return MINIAPP.id;
    case 'day':
      return '2026-11-25';
    case 'delivery_id':
    case 'credential_id':
      return '0b6e2f1c-8a43-4c55-9a7e-3f0e6f1c2d9b';
    default:
      return '';
  }
}

/** The first request body example of an operation, so body validation never stops a request before its parameters are read. */
function exampleBody(op: OperationContract): object | undefined {
  if (!op.validateBody) return undefined;
  const example = contractExamples().find((candidate) => candidate.name.startsWith(`platform ${op.operationId} request body`));
  if (!example) throw new Error(`${op.operationId} has a request body but no example`);
  return example.value as object;
}

function encode(value: Hostile): string {
  return 'raw' in value ? value.raw : encodeURIComponent(value.text);
}

describeOnBackends('parameter fuzzing', (backend) => {
  const harness = new PlatformHarness();
  beforeAll(async () => {
    await harness.start({
      backend: backend.name,
      // Thousands of requests from one operator in a few seconds: the rate limit is not under test.
      config: { rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } },
    });
  }, 120_000);
  afterAll(() => harness.stop());

  const operations = [...contractOperations().values()].filter(
    (op) => op.api === 'platform' && op.parameters.some((parameter) => parameter.in === 'path' || parameter.in === 'query'),
  );

  test.each(operations.map((op) => [op.operationId, op] as const))('%s', async (_name, op) => {
    const drawn = fc.sample(fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 40 })), {
      seed: SEED,
      numRuns: RUNS,
    });
    const body = exampleBody(op);
    const authorization = op.security.length > 0 ? `Bearer ${ADMIN_TOKEN}` : undefined;
    const parameters = op.parameters.filter((parameter) => parameter.in === 'path' || parameter.in === 'query');
    for (const parameter of parameters) {
      // In a path, an empty or dot segment names another route (URLs are normalised before they are sent).
      const sameRoute = (value: Hostile) => parameter.in !== 'path' || !('text' in value) || !['', '.', '..'].includes(value.text);
      const values: Hostile[] = [...hostile, ...drawn.map((text) => ({ text }))].filter(sameRoute);
      for (const value of values) {
        let path = op.path;
        const query: string[] = [];
        for (const other of parameters) {
          const sent = other === parameter ? encode(value) : encodeURIComponent(validValue(other.name));
          if (other.in === 'path') path = path.replace(`{${other.name}}`, sent);
          else if (other === parameter) query.push(`${other.name}=${sent}`);
        }
        const what = `${op.operationId} ${parameter.in} ${parameter.name}=${JSON.stringify('raw' in value ? value.raw : value.text).slice(0, 60)}`;
        const answer = await harness.call(op.operationId, body, {
          authorization,
          path: query.length > 0 ? `${path}?${query.join('&')}` : path,
        });
        expect(answer.status, `${what}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
        if (answer.status === 400) expect(answer.body.error_code, what).toBe('INVALID_REQUEST');
        if (parameter.name === 'cursor' && foreignCursors.includes(value))
          expect([answer.status, answer.body?.error_code], `${what}: ${answer.text.slice(0, 300)}`).toEqual([400, 'INVALID_REQUEST']);
      }
    }
  });
});
