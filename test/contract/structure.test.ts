import { describe, expect, test } from 'vitest';
import { API_NAMES, loadDocument, resolve, type ApiName, type JsonObject } from '../../src/contract/documents.js';
import { documentedOperations } from '../../scripts/mock/contract-document.js';

const PARTNER_APIS: ApiName[] = ['hostapp', 'miniapp'];
const platform = loadDocument('platform');
const errorCode = platform.components.schemas!.ErrorCode as JsonObject & { enum: string[] };
/** The codes a schema lists itself: its enum, or the enums of its own anyOf branches (DashboardErrorCode). */
const ownCodes = (schema: JsonObject): string[] =>
  Array.isArray(schema.enum)
    ? (schema.enum as string[])
    : ((schema.anyOf as JsonObject[] | undefined) ?? []).flatMap((branch) => (Array.isArray(branch.enum) ? (branch.enum as string[]) : []));
/** Every code an answer may carry: the v1 catalogue and the codes only the Dashboard API answers. */
const catalogue = [...errorCode.enum, ...ownCodes(platform.components.schemas!.DashboardErrorCode as JsonObject)];

/** Every example value in the three documents (component examples and inline ones). */
const exampleValues = API_NAMES.flatMap((api) =>
  Object.values(loadDocument(api).components.examples ?? {}).map((example) => example.value),
);
const errorCodesInExamples = new Set(
  exampleValues.flatMap((value) =>
    value !== null && typeof value === 'object' && typeof (value as JsonObject).error_code === 'string'
      ? [(value as JsonObject).error_code as string]
      : [],
  ),
);

describe('platform operations', () => {
  const withBody = documentedOperations(platform).filter((found) => found.node.requestBody);

  test('there are platform operations with a body', () => {
    expect(withBody.map((found) => found.operationId)).toEqual(
      expect.arrayContaining(['createOrderPayment', 'getPaymentStatus', 'completeOrder', 'sendHostappEvent', 'sendMiniappEvent']),
    );
  });

  test.each(withBody.map((found) => [found.operationId, found] as const))('%s documents a 400 with the Error schema', (_id, found) => {
    const response = (found.node.responses as JsonObject)['400'];
    expect(response, 'no 400 response').toBeDefined();
    const media = (resolve(platform, response).content as JsonObject)['application/json'] as JsonObject;
    expect(media.schema).toEqual({ $ref: '#/components/schemas/Error' });
  });
});

describe('the error catalogue', () => {
  test.each(errorCode.enum.map((code) => [code]))('%s is described and shown in an error example', (code) => {
    const descriptions = errorCode['x-enumDescriptions'] as Record<string, string>;
    expect(descriptions[code], `x-enumDescriptions has no entry for ${code}`).toEqual(expect.stringMatching(/\S/));
    expect(errorCodesInExamples.has(code), `no example in the contract carries error_code ${code}`).toBe(true);
  });

  test('x-enumDescriptions describe only codes of the enum, in every schema that has them', () => {
    for (const api of API_NAMES) {
      for (const [name, schema] of Object.entries(loadDocument(api).components.schemas ?? {})) {
        const descriptions = schema['x-enumDescriptions'] as Record<string, string> | undefined;
        if (!descriptions) continue;
        expect(Object.keys(descriptions).sort(), `${api} ${name}`).toEqual([...ownCodes(schema as JsonObject)].sort());
      }
    }
  });

  test('x-retryable lists codes of the enum only', () => {
    const retryable = errorCode['x-retryable'] as string[];
    expect(retryable.length).toBeGreaterThan(0);
    expect(retryable.filter((code) => !errorCode.enum.includes(code))).toEqual([]);
  });

  test('every error_code in an example is a catalogue code', () => {
    expect([...errorCodesInExamples].filter((code) => !catalogue.includes(code))).toEqual([]);
  });
});

describe('partner operations answer HTTP 200 in all cases', () => {
  const partnerOperations = PARTNER_APIS.flatMap((api) =>
    documentedOperations(loadDocument(api)).map((found) => [api, found.operationId, found] as const),
  );

  test.each(partnerOperations)('%s %s: only a 200, with invalidRequest and unauthorized examples', (api, _id, found) => {
    const document = loadDocument(api);
    const responses = found.node.responses as JsonObject;
    expect(Object.keys(responses)).toEqual(['200']);
    const media = (resolve(document, responses['200']).content as JsonObject)['application/json'] as JsonObject;
    const examples = media.examples as JsonObject;
    for (const name of ['invalidRequest', 'unauthorized']) {
      expect(Object.keys(examples), `no ${name} example`).toContain(name);
      expect(resolve(document, examples[name]).value).toMatchObject({ error_code: expect.any(String) });
    }
    expect((resolve(document, examples.unauthorized).value as JsonObject).error_code).toBe('UNAUTHORIZED');
  });

  test('the platform lists every partner operation under webhooks', () => {
    const webhooks = documentedOperations(platform, 'webhooks')
      .map((found) => found.operationId)
      .sort();
    expect(webhooks).toEqual(partnerOperations.map(([, id]) => id).sort());
  });
});

describe('operationIds', () => {
  const ids = API_NAMES.flatMap((api) => documentedOperations(loadDocument(api)).map((found) => found.operationId));

  test('are unique across the three APIs', () => {
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  test.each(ids.map((id) => [id]))('%s is camelCase', (id) => {
    expect(id).toMatch(/^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)*$/);
  });
});

describe('partner documents', () => {
  test.each(PARTNER_APIS.map((api) => [api]))('%s: the server URL is a variable registered in the dashboard', (api) => {
    const servers = loadDocument(api).servers as Array<{
      url: string;
      variables?: Record<string, { description?: string; default?: string }>;
    }>;
    expect(servers.length).toBeGreaterThan(0);
    const variables = servers.flatMap((server) => Object.entries(server.variables ?? {}));
    expect(variables.length).toBeGreaterThan(0);
    for (const [name, variable] of variables) {
      expect(servers.some((server) => server.url.includes(`{${name}}`))).toBe(true);
      expect(variable.description ?? '').toMatch(/dashboard/i);
    }
  });
});
