import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadDocument, resolve } from '../../../src/contract/documents.js';
import { contractOperations, type OperationContract } from '../../../src/contract/operations.js';
import { documentedError, invalidInputCode, type ErrorCode } from '../../../src/contract/errors.js';
import { authenticationOf } from '../../../src/platform/auth/admission.js';
import { describeOnBackends } from '../../support/databases.js';
import { ADMIN_TOKEN, PlatformHarness } from '../../support/platformHarness.js';

/**
 * An error code an operation does not document must never reach the wire under a status the
 * operation does not list (ADR 0020). For every platform operation this collects every error
 * code the code can raise and checks the contract documents it on that operation:
 * - the pipeline's codes (src/platform/http/operationRoutes.ts, rawBody.ts, auth/), by what the
 *   operation has: a body, parameters, and the authentication its security asks for (chosen by
 *   the same code that admits requests, auth/admission.ts);
 * - the handler's codes: every ErrorCode literal in src/platform/operations/<operationId>.ts and the
 *   src/ modules it imports, transitively (an over-approximation: a code a shared module raises
 *   for another operation must be documented here too, or moved out of the shared path).
 */
const catalogue = new Set(resolve<{ enum: ErrorCode[] }>(loadDocument('platform'), { $ref: '#/components/schemas/ErrorCode' }).enum);
const srcDir = path.resolve(import.meta.dirname, '../../../src');
const platformOperations = [...contractOperations().values()].filter((op) => op.api === 'platform');

/**
 * The .ts files under src/ that `file` imports, transitively, excluding the pipeline (src/platform/http/
 * and the body reader, whose codes are the pipeline's) and the catalogue itself (src/contract/errors.ts).
 */
const notHandlerCode = [
  path.join(srcDir, 'platform', 'http') + path.sep,
  path.join(srcDir, 'wire', 'rawBody.ts'),
  path.join(srcDir, 'contract', 'errors.ts'),
];
function importClosure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\s(?!type\b)[^'"]*?from\s+'(\.[^']+)'/gm)) {
    const target = path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts'));
    if (target.startsWith(srcDir + path.sep) && !notHandlerCode.some((excluded) => target.startsWith(excluded)))
      importClosure(target, seen);
  }
  return seen;
}

function handlerCodes(operationId: string): Set<ErrorCode> {
  const codes = new Set<ErrorCode>();
  for (const file of importClosure(path.join(srcDir, 'platform', 'operations', `${operationId}.ts`))) {
    for (const [, literal] of readFileSync(file, 'utf8').matchAll(/'([A-Z][A-Z_]+)'/g))
      if (catalogue.has(literal as ErrorCode)) codes.add(literal as ErrorCode);
  }
  return codes;
}

function pipelineCodes(op: OperationContract): Set<ErrorCode> {
  const codes = new Set<ErrorCode>(['UNKNOWN_ERROR']);
  if (op.validateBody) for (const code of [invalidInputCode(op), 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'] as const) codes.add(code);
  if (op.parameters.length > 0) codes.add(invalidInputCode(op));
  if (authenticationOf(op).kind !== 'none') for (const code of ['UNAUTHORIZED', 'RATE_LIMITED'] as const) codes.add(code);
  return codes;
}

test('there are platform operations, and the scan finds the codes handlers are known to raise', () => {
  expect(platformOperations.length).toBeGreaterThan(8);
  // The dashboard's operations authenticate too, so their RATE_LIMITED and UNAUTHORIZED are checked.
  const dashboard = platformOperations.filter((op) => authenticationOf(op).kind === 'dashboard');
  expect(dashboard.length).toBeGreaterThanOrEqual(14);
  expect(pipelineCodes(dashboard[0])).toContain('RATE_LIMITED');
  expect(handlerCodes('completeOrder')).toEqual(
    new Set(['ORDER_NOT_FOUND', 'PAYMENT_STATUS_CONFLICT', 'UNAUTHORIZED', 'PAYMENT_DISABLED']),
  );
  expect(handlerCodes('getDelivery')).toContain('NOT_FOUND');
  expect([...handlerCodes('sendHostappEvent')]).toEqual(expect.arrayContaining(['EVENT_RECEIVER_DISABLED', 'EVENT_DELIVERY_FAILED']));
});

describe('every error code an operation can raise is documented on it, with its status', () => {
  const cases = platformOperations.flatMap((op) =>
    [...new Set([...pipelineCodes(op), ...handlerCodes(op.operationId)])].map((code) => [op.operationId, code, op] as const),
  );

  test.each(cases)('%s: %s', (_operationId, code, op) => {
    const status = op.errorStatus.get(code);
    expect(status, `${op.operationId} can raise ${code} but documents no error example with it`).toBeDefined();
    expect(op.responses.has(String(status))).toBe(true);
    expect(documentedError(code, op)).toEqual({ status, code });
  });

  test.each(platformOperations.map((op) => [op.operationId, op] as const))(
    '%s documents UNKNOWN_ERROR, the answer for anything unforeseen',
    (_operationId, op) => {
      expect(op.errorStatus.get('UNKNOWN_ERROR')).toBeDefined();
    },
  );
});

describe('an undocumented code never goes out under a guessed status', () => {
  const getDelivery = contractOperations().get('getDelivery')!;

  test('it goes out as the operation’s documented UNKNOWN_ERROR, naming what was raised', () => {
    expect(documentedError('IDEMPOTENCY_CONFLICT', getDelivery)).toEqual({
      status: 503,
      code: 'UNKNOWN_ERROR',
      undocumented: 'IDEMPOTENCY_CONFLICT',
    });
    const createOrderPayment = contractOperations().get('createOrderPayment')!;
    expect(documentedError('NOT_FOUND', createOrderPayment)).toEqual({ status: 400, code: 'UNKNOWN_ERROR', undocumented: 'NOT_FOUND' });
  });

  test('without an operation only the HTTP-level codes keep their status', () => {
    expect(documentedError('NOT_FOUND', undefined)).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect(documentedError('METHOD_NOT_ALLOWED', undefined)).toEqual({ status: 405, code: 'METHOD_NOT_ALLOWED' });
    expect(documentedError('ORDER_NOT_FOUND', undefined)).toEqual({ status: 503, code: 'UNKNOWN_ERROR', undocumented: 'ORDER_NOT_FOUND' });
  });
});

describeOnBackends('error statuses', (backend) => {
  describe('over HTTP: a malformed delivery_id is a documented 400 INVALID_REQUEST, not a retryable 503', () => {
    const harness = new PlatformHarness();
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    beforeAll(() => harness.start({ backend: backend.name }), 30_000);
    afterAll(() => harness.stop());

    test.each([
      ['getDelivery', '/api/v1/admin/deliveries/not-a-uuid'],
      ['redeliverDelivery', '/api/v1/admin/deliveries/not-a-uuid/redeliver'],
      // Not percent-encoded UTF-8: Express fails to decode the parameter before the handler runs.
      ['getDelivery', '/api/v1/admin/deliveries/%zz'],
      ['getDelivery', '/api/v1/admin/deliveries/%ED%A0%80'],
      ['redeliverDelivery', '/api/v1/admin/deliveries/%C0%AF/redeliver'],
    ])('%s %s', async (operationId, requestPath) => {
      // harness.call also checks the status is documented and the body matches its schema.
      const answer = await harness.call(operationId, undefined, { ...admin, path: requestPath });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error_code: 'INVALID_REQUEST', error_message: expect.stringMatching(/delivery_id|percent-encoded/) });
      expect(answer.headers.get('retry-after')).toBeNull();
    });
  });
});
