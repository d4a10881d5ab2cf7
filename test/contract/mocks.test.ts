import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { API_NAMES, resolve, type ApiName, type JsonObject } from '../../src/contract/documents.js';
import { parseLossless } from '../../src/contract/json.js';
import { copyJson, withRawAt } from '../../src/contract/jsonPath.js';
import { loadLosslessDocument } from '../../src/contract/losslessDocument.js';
import { check, contractOperations, operation } from '../../src/contract/operations.js';
import { documentedResponse } from '../../scripts/mock/contract-document.js';
import { startMock, type MockServer } from '../../scripts/mock/server.js';
import {
  allowsAnonymous,
  credentialsHeader,
  documented,
  parametersOf,
  requestSchema,
  send,
  validRequest,
  type BuiltRequest,
} from '../support/contract-requests.js';

const mocks = new Map<ApiName, MockServer>();
const logLines: string[] = [];

beforeAll(async () => {
  for (const api of API_NAMES) mocks.set(api, await startMock(api, 0, { log: (line) => logLines.push(line) }));
}, 60_000);

afterAll(async () => {
  await Promise.all([...mocks.values()].map((mock) => mock.close()));
});

const operationsOf = (api: ApiName) => [...contractOperations().values()].filter((candidate) => candidate.api === api);
const allOperations = API_NAMES.flatMap((api) => operationsOf(api).map((found) => [api, found.operationId] as const));
const bodyOperations = allOperations.filter(([, operationId]) => operation(operationId).validateBody);
const securedOperations = allOperations.filter(([, operationId]) => !allowsAnonymous(operationId));

async function call(api: ApiName, request: BuiltRequest, rawBody?: string) {
  const response = await send(mocks.get(api)!.url, request, rawBody);
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json') ? parseLossless(text) : undefined;
  return { status: response.status, headers: response.headers, text, json };
}

function successStatus(operationId: string): string {
  const status = [...operation(operationId).responses.keys()].find((candidate) => candidate.startsWith('2'));
  if (!status) throw new Error(`${operationId} documents no success response`);
  return status;
}

function examplesOf(api: ApiName, operationId: string, status: string) {
  const response = documentedResponse(loadLosslessDocument(api), documented(api, operationId), status);
  if (!response) throw new Error(`${operationId} documents no ${status} response`);
  return response.examples;
}

/** What the platform answers to an invalid request: its 422, else 400, else 404 (the mock's rule). */
function invalidStatus(operationId: string): string {
  const status = ['422', '400', '404'].find((candidate) => operation(operationId).responses.has(candidate));
  if (!status) throw new Error(`${operationId} documents no error response for invalid requests`);
  return status;
}

function partnerExample(api: ApiName, operationId: string, name: string): unknown {
  const example = examplesOf(api, operationId, '200').find((candidate) => candidate.name === name);
  if (!example) throw new Error(`${operationId} has no 200 example named ${name}`);
  return example.value;
}

/** Asserts the contract's answer to an invalid request, per API. */
async function expectRefused(api: ApiName, operationId: string, reply: Awaited<ReturnType<typeof call>>, naming?: string): Promise<void> {
  expect(reply.headers.get('x-mock-violations')).toBeTruthy();
  if (api === 'platform') {
    const status = invalidStatus(operationId);
    expect(reply.status).toBe(Number(status));
    expect(check(operation(operationId).responses.get(status)!.validate!, reply.json)).toEqual({ valid: true });
    const documentedCode = (examplesOf(api, operationId, status)[0]!.value as JsonObject).error_code;
    expect((reply.json as JsonObject).error_code).toBe(documentedCode);
    if (naming) expect((reply.json as JsonObject).error_message).toContain(naming);
  } else {
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual(partnerExample(api, operationId, 'invalidRequest'));
    expect((reply.json as JsonObject).error_code).toEqual(expect.any(String));
  }
}

describe('a valid request gets the documented success example', () => {
  test.each(allOperations)('%s %s', async (api, operationId) => {
    const status = successStatus(operationId);
    const linesBefore = logLines.length;
    const reply = await call(api, validRequest(api, operationId));
    expect(reply.status, reply.text).toBe(Number(status));
    expect(reply.headers.get('x-mock-violations')).toBeNull();
    const { contentType, validate } = operation(operationId).responses.get(status)!;
    expect(reply.headers.get('content-type')).toBe(contentType);
    const body = reply.json ?? reply.text;
    expect(check(validate!, body)).toEqual({ valid: true });
    expect(examplesOf(api, operationId, status).map((example) => example.value)).toContainEqual(body);
    expect(logLines.length).toBe(linesBefore + 1);
    expect(logLines[logLines.length - 1]).toContain(`-> ${status} ${operationId}`);
  });
});

describe('a request missing a required field gets the contract error (platform: its 4xx; partners: HTTP 200)', () => {
  type InvalidCase = readonly [ApiName, string, string, BuiltRequest, string];
  const cases = allOperations.flatMap(([api, operationId]): InvalidCase[] => {
    const request = validRequest(api, operationId);
    const schema = requestSchema(api, operationId);
    const required = schema ? (resolve(loadLosslessDocument(api), schema).required as string[] | undefined) : undefined;
    // A body with nothing required (the dashboard's updates: every member optional, at least one) is refused empty.
    if (schema && !required?.length)
      return [[api, operationId, 'anything to change (an empty body)', { ...request, body: {} }, 'at least 1']];
    if (schema) {
      const field = required![0]!;
      const body = copyJson(request.body) as JsonObject;
      delete body[field];
      return [[api, operationId, `body field ${field}`, { ...request, body }, field]];
    }
    const query = parametersOf(api, operationId).find((parameter) => parameter.required && parameter.in === 'query');
    if (query) {
      const [path, search] = request.target.split('?');
      const params = new URLSearchParams(search);
      params.delete(query.name);
      return [[api, operationId, `query parameter ${query.name}`, { ...request, target: `${path}?${params}` }, query.name]];
    }
    const pathParameter = parametersOf(api, operationId).find((parameter) => parameter.in === 'path');
    if (pathParameter) {
      // An identifier of any alphabet (ClientId, AppId) is malformed only past its length limit.
      const maxLength = (pathParameter.schema as { maxLength?: number } | undefined)?.maxLength;
      const pattern = (pathParameter.schema as { pattern?: string; format?: string } | undefined) ?? {};
      const malformed = maxLength !== undefined && !pattern.pattern && !pattern.format ? 'x'.repeat(maxLength + 1) : 'not-an-id';
      const target = documented(api, operationId).path.replace(`{${pathParameter.name}}`, malformed);
      return [[api, operationId, `path parameter ${pathParameter.name} (malformed)`, { ...request, target }, pathParameter.name]];
    }
    return [];
  });

  test('covers every operation that has something to leave out', () => {
    const covered = new Set(cases.map(([, operationId]) => operationId));
    const uncovered = allOperations.filter(([, operationId]) => !covered.has(operationId)).map(([, operationId]) => operationId);
    // Only operations without a body and without required or path parameters remain.
    for (const operationId of uncovered) expect(operation(operationId).parameters.filter((parameter) => parameter.required)).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(bodyOperations.length);
  });

  test.each(cases)('%s %s without %s', async (api, operationId, _what, request, naming) => {
    await expectRefused(api, operationId, await call(api, request), naming);
  });
});

describe('malformed JSON is an invalid request', () => {
  test.each(bodyOperations)('%s %s', async (api, operationId) => {
    const reply = await call(api, validRequest(api, operationId), '{"app_id": "ma_7f3c2a",');
    await expectRefused(api, operationId, reply, 'not valid JSON');
  });
});

describe('the invalid-data codes of the platform operations', () => {
  const expected: Array<[string, number, string]> = [
    ['createOrderPayment', 400, 'INVALID_ORDER_DATA'],
    ['getPaymentStatus', 400, 'INVALID_REQUEST'],
    ['completeOrder', 400, 'INVALID_REQUEST'],
    ['sendHostappEvent', 400, 'INVALID_EVENT_DATA'],
    ['sendMiniappEvent', 400, 'INVALID_EVENT_DATA'],
  ];
  test.each(expected)('%s answers %i %s', async (operationId, status, errorCode) => {
    const reply = await call('platform', validRequest('platform', operationId), '{}');
    expect(reply.status).toBe(status);
    expect(reply.json).toMatchObject({ error_code: errorCode, error_message: expect.stringContaining('is required') });
  });
});

describe('missing credentials', () => {
  test('some operations require credentials', () => {
    expect(securedOperations.length).toBeGreaterThan(4);
  });

  test.each(securedOperations)('%s %s', async (api, operationId) => {
    const request = validRequest(api, operationId);
    const headers = { ...request.headers };
    for (const name of Object.keys(credentialsHeader(api, operationId))) delete headers[name];
    const reply = await call(api, { ...request, headers });
    expect(reply.headers.get('x-mock-violations')).toContain('credentials');
    if (api === 'platform') {
      expect(reply.status).toBe(operation(operationId).errorStatus.get('UNAUTHORIZED'));
      expect(reply.json).toMatchObject({ error_code: 'UNAUTHORIZED', error_message: expect.any(String) });
    } else {
      expect(reply.status).toBe(200);
      expect(reply.json).toEqual(partnerExample(api, operationId, 'unauthorized'));
    }
  });

  test('E8 without credentials is 401 UNAUTHORIZED with WWW-Authenticate', async () => {
    const request = validRequest('platform', 'sendHostappEvent');
    const { Authorization: _dropped, ...headers } = request.headers;
    const reply = await call('platform', { ...request, headers });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBeTruthy();
    expect((reply.json as JsonObject).error_code).toBe('UNAUTHORIZED');
  });
});

describe('HTTP-level answers', () => {
  test.each(bodyOperations.filter(([api]) => api === 'platform'))('%s %s: a body that is not JSON is 415', async (api, operationId) => {
    const request = validRequest(api, operationId);
    const reply = await call(api, { ...request, headers: { ...request.headers, 'Content-Type': 'text/plain' } }, 'hello');
    expect(reply.status).toBe(415);
    expect(reply.json).toMatchObject({ error_code: 'UNSUPPORTED_MEDIA_TYPE', error_message: expect.stringContaining('text/plain') });
  });

  test.each(API_NAMES.map((api) => [api]))('%s: an unknown route is 404 NOT_FOUND in JSON', async (api) => {
    const reply = await call(api, { method: 'GET', target: '/no/such/route', headers: {} });
    expect(reply.status).toBe(404);
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(reply.json).toEqual({ error_code: 'NOT_FOUND', error_message: 'No route GET /no/such/route' });
  });

  test('a known route with another method is 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const reply = await call('platform', { method: 'DELETE', target: '/api/v1/orders/create-order-payment/', headers: {} });
    expect(reply.status).toBe(405);
    expect(reply.headers.get('allow')).toBe('POST');
    expect((reply.json as JsonObject).error_code).toBe('METHOD_NOT_ALLOWED');
  });
});

describe('contract details the mocks honour', () => {
  test('digits are judged on the exact text: a 20-digit amount passes, 21 digits do not (E3 mock)', async () => {
    const request = validRequest('hostapp', 'createHostappOrderPayment');
    const twenty = await call('hostapp', { ...request, body: withRawAt(request.body, ['order', 'amount'], '12345678901234567890') });
    expect(twenty.headers.get('x-mock-violations')).toBeNull();
    expect((twenty.json as JsonObject).order_payment_id).toEqual(expect.any(String));
    const tooMany = await call('hostapp', { ...request, body: withRawAt(request.body, ['order', 'amount'], '123456789012345678901') });
    expect(tooMany.status).toBe(200);
    expect(tooMany.json).toEqual(partnerExample('hostapp', 'createHostappOrderPayment', 'invalidRequest'));
    expect(tooMany.headers.get('x-mock-violations')).toContain('order.amount');
  });

  test('Prefer: example=<name> selects a documented example', async () => {
    const request = validRequest('platform', 'getPaymentStatus');
    const reply = await call('platform', { ...request, headers: { ...request.headers, Prefer: 'example=inProcess' } });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual(examplesOf('platform', 'getPaymentStatus', '200').find((example) => example.name === 'inProcess')!.value);
  });

  test('Prefer: code=400, example=<name> selects a documented error example', async () => {
    const request = validRequest('platform', 'getPaymentStatus');
    const reply = await call('platform', { ...request, headers: { ...request.headers, Prefer: 'code=400, example=orderNotFound' } });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual(
      examplesOf('platform', 'getPaymentStatus', '400').find((example) => example.name === 'orderNotFound')!.value,
    );
  });

  test('a Prefer the contract cannot satisfy is reported, not guessed', async () => {
    const request = validRequest('hostapp', 'createHostappOrderPayment');
    const reply = await call('hostapp', { ...request, headers: { ...request.headers, Prefer: 'example=noSuchExample' } });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual(partnerExample('hostapp', 'createHostappOrderPayment', 'invalidRequest'));
    expect(reply.headers.get('x-mock-violations')).toContain('noSuchExample');
  });
});
