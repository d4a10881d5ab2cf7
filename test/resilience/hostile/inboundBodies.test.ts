/**
 * The hostile-input suite for inbound bodies (ADR 0015), property-based and seeded:
 * for every platform operation that takes a body and every operation the partner kit's routers
 * serve (both lists read from the contract), hostile JSON made at random places of a valid
 * body's own structure:
 * - a member named after any member of Object.prototype (`__proto__` included), at any depth,
 *   holding arbitrary JSON or one of its parent's members moved inside it;
 * - a member sent twice (same value or not, escaped or not);
 * - a number of any shape (signs, 1,000 digits, fractions, exponents) in place of any scalar.
 * Each case asserts a documented, contract-shaped answer; the contract's invalid-input error
 * wherever the body is invalid without the hostile member's help, or must be refused; then no
 * partner call and no stored change; and, where the body is accepted, that the injected member
 * reaches a partner only inside an object the contract leaves open. Memory stays bounded.
 * HOSTILE_SEED and HOSTILE_RUNS reproduce or widen a run.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prefixedAuthorization, basicAuthorization } from '../../../src/wire/authorization.js';
import { decimalViolation, INTEGER_TEXT } from '../../../src/contract/decimal.js';
import { isJsonObject, maxJsonDepth, parseLossless, stringifyLossless } from '../../../src/contract/json.js';
import { getAt, type JsonPath } from '../../../src/contract/jsonPath.js';
import { check, contractOperations, type OperationContract } from '../../../src/contract/operations.js';
import { documentedError, invalidInputCode } from '../../../src/contract/errors.js';
import { handlers } from '../../../src/platform/operations/index.js';
import { pipelineErrorCodes } from '../../../src/shipped/partner-kit/contractAnswers.js';
import { createHostappRouter, createMiniappRouter } from '../../../src/shipped/partner-kit/index.js';
import { resolve, type JsonObject } from '../../../src/contract/documents.js';
import { loadLosslessDocument, namedExamples } from '../../../src/contract/losslessDocument.js';
import { documented, parametersOf, requestExamples, requestSchema } from '../../support/contract-requests.js';
import { effective } from '../support/contractSchema.js';
import { MINIAPP_PATHS } from '../support/fakePartner.js';
import { ADMIN_TOKEN } from '../support/requests.js';
import { describeOnBackends } from '../../support/databases.js';
import { startHarness, type Harness } from '../support/platformHarness.js';
import { PARTIES, hostappBasicAuthorization, hostappTokenAuthorization, miniappAuthorization } from '../support/registry.js';
import { duplicateMember, forwardedAt, oddNumber, prototypeInjection, unreadableMember, type Hostile } from './support/hostileJson.js';

const SEED = Number(process.env.HOSTILE_SEED ?? 20261124);
const RUNS = Number(process.env.HOSTILE_RUNS ?? 30);
const TIMEOUT_MS = 600_000;
/** Growth of the test process's heap over a whole property that still counts as bounded. */
const HEAP_GROWTH_BOUND = 256 * 1024 * 1024;
/**
 * Each operation's cases carry their own sentinel: another operation may forward a sentinel
 * legitimately (inside a free-form event payload) and its partner call can land while a later
 * test watches the same fake partners, whatever order the tests run in.
 */
const sentinelOf = (op: OperationContract) => `zz-hostile-sentinel-${op.operationId}`;
const ORDER_MARKER = 'ORD-HOSTILE-MARKER';

const platformOperations = [...contractOperations().values()].filter((op) => op.api === 'platform' && op.validateBody);
const partnerKitOperations = [...contractOperations().values()].filter((op) => op.api !== 'platform' && op.validateBody);

type Generator = (base: unknown, sentinel: string) => fc.Arbitrary<Hostile>;
const generators: Array<[string, Generator]> = [
  ['Object.prototype names at any depth', (base, sentinel) => prototypeInjection(base, sentinel)],
  ['repeated members', duplicateMember],
  ['numbers of any shape', oddNumber],
  ['nesting past x-max-json-depth, U+0000 and lone surrogates', (base) => unreadableMember(base, maxJsonDepth())],
];

/** The first request example of an operation, with the test's registered parties and a marker for a fresh order id. */
function baseBody(op: OperationContract): unknown {
  const example = requestExamples(op.api, op.operationId)[0]?.value;
  if (!isJsonObject(example)) throw new Error(`${op.operationId} has no object example`);
  const body = parseLossless(stringifyLossless(example)) as Record<string, unknown>;
  if (op.api === 'platform') {
    if (Object.hasOwn(body, 'app_id')) body.app_id = PARTIES.appId;
    if (Object.hasOwn(body, 'client_id')) body.client_id = PARTIES.clientId;
    const order = body.order;
    if (isJsonObject(order) && Object.hasOwn(order, 'miniapp_order_id')) order.miniapp_order_id = ORDER_MARKER;
  }
  return body;
}

function requestSchemaRef(op: OperationContract): unknown {
  return requestSchema(op.api, op.operationId);
}

/**
 * Whether the body must be refused whatever the reader does: the generator says so, or the body
 * without the hostile member breaks the contract, or a number breaks its location's rule (the
 * x-decimal digits and sign, the digits-only integers, a string where the contract wants text).
 */
function mustRefuse(op: OperationContract, hostile: Hostile): boolean {
  if (hostile.mustRefuse) return true;
  if (hostile.plain !== undefined) return !check(op.validateBody!, hostile.plain).valid;
  return !check(op.validateBody!, parseLossless(hostile.text)).valid;
}

/** Independent of the validator: what a number at a contract location must get. */
function numberVerdict(op: OperationContract, hostile: Hostile, at: JsonPath | undefined): 'refuse' | 'either' {
  if (!at) return 'either';
  const value = parseLossless(hostile.text);
  let nodes: readonly unknown[] = [requestSchemaRef(op)];
  for (let depth = 0; depth < at.length; depth++) {
    const merged = effective(op.api, nodes, getAt(value, at.slice(0, depth)));
    if (merged.open) return 'either';
    const part = at[depth]!;
    const next = typeof part === 'number' ? merged.items : merged.properties.get(part);
    if (!next?.length) return 'either';
    nodes = next;
  }
  const here = effective(op.api, nodes, getAt(value, at));
  const text = (getAt(value, at) as { value: string }).value;
  if (here.decimal) return decimalViolation(text, here.decimal) === undefined ? 'either' : 'refuse';
  if (here.types.includes('integer')) return INTEGER_TEXT.test(text) ? 'either' : 'refuse';
  if (here.types.length > 0 && !here.types.includes('number') && !here.types.includes('integer') && !here.anyOf) return 'refuse';
  return 'either';
}

describeOnBackends('hostile inbound bodies', (backend) => {
  describe(`hostile inbound bodies on the platform (HOSTILE_SEED=${SEED}, ${RUNS} runs per property)`, () => {
    let harness: Harness;
    let orderCounter = 0;
    beforeAll(async () => {
      // No E6 worker and no reconciler: nothing changes the store or calls a partner behind a
      // case's back (the reconciler's first E4 ask of a payment a case created comes a minute
      // later, inside a later case's count on a slow run).
      harness = await startHarness(
        {
          adminToken: ADMIN_TOKEN,
          worker: { pollMs: 250, batchSize: 50, leaseMs: 60_000, enabled: false },
          reconciler: { pollMs: 1_000, batchSize: 50, enabled: false },
        },
        backend.name,
      );
    }, 120_000);
    afterAll(async () => {
      await harness?.close();
    }, 60_000);

    /** The statement counting every table's rows, made once: nothing a case sends adds a table. */
    let countingStatement: Promise<{ tables: string[]; sql: string }> | undefined;

    /**
     * Every table's row count, in one statement: a count per table and per statement, each
     * refused case before and after, was most of this file's time on PGlite.
     */
    async function storeCounts(): Promise<string> {
      const { db } = harness.running.platform.store;
      countingStatement ??= db
        .query<{ table_name: string }>(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
        )
        .then((rows) => {
          const tables = rows.map((row) => row.table_name);
          return { tables, sql: `SELECT ${tables.map((table, i) => `(SELECT count(*)::int FROM "${table}") AS c${i}`).join(', ')}` };
        });
      const { tables, sql } = await countingStatement;
      const [row] = await db.query<Record<string, number>>(sql);
      return tables.map((table, i) => `${table}=${row![`c${i}`]}`).join(' ');
    }

    /** Requests the fake partners received synchronously from a platform operation (E6 is asynchronous and off). */
    function partnerRequests(): Array<{ raw: string }> {
      const all: Array<{ raw: string }> = [];
      for (const partner of [harness.hostapp, harness.miniapp]) {
        for (const [path, list] of partner.received)
          if (!(partner === harness.miniapp && path === MINIAPP_PATHS.completeOrder)) all.push(...list);
      }
      return all;
    }

    function authorizationFor(op: OperationContract, body: unknown): string {
      // Dashboard operations: the operator, who may call every one of them.
      if (op.security.some((requirement) => 'dashboardOperator' in requirement)) return `Bearer ${ADMIN_TOKEN}`;
      const caller = handlers[op.operationId as keyof typeof handlers]?.caller?.(body as never);
      if (!caller) throw new Error(`${op.operationId} names no caller`);
      if (caller.kind === 'miniapp') return miniappAuthorization;
      return op.security.some((requirement) => 'hostappToken' in requirement) ? hostappTokenAuthorization : hostappBasicAuthorization;
    }

    it('the contract has platform operations with a body', () => {
      expect(platformOperations.map((op) => op.operationId).length).toBeGreaterThanOrEqual(5);
    });

    for (const op of platformOperations) {
      for (const [name, generator] of generators) {
        it(
          `${op.operationId}: ${name}`,
          async () => {
            const base = baseBody(op);
            const authorization = authorizationFor(op, base);
            const invalidCode = invalidInputCode(op);
            const heapAtStart = process.memoryUsage().heapUsed;
            let refused = 0;
            await fc.assert(
              fc.asyncProperty(generator(base, sentinelOf(op)), async (hostile) => {
                const text = hostile.text.replace(ORDER_MARKER, `ORD-hostile-${SEED}-${orderCounter++}`);
                const refuse = mustRefuse(op, hostile) || numberVerdict(op, hostile, numberPath(hostile, base)) === 'refuse';
                const storeBefore = refuse ? await storeCounts() : '';
                const partnerBefore = partnerRequests().length;
                const response = await fetch(harness.running.url + op.path, {
                  method: op.method,
                  headers: { 'content-type': 'application/json', authorization },
                  body: text,
                });
                const answerText = await response.text();
                const where = `${op.operationId} ${hostile.label}: answered ${response.status} ${answerText.slice(0, 300)}`;
                const documented = op.responses.get(String(response.status));
                expect(documented, where).toBeDefined();
                expect(response.status, where).toBeLessThan(500);
                const answer = parseLossless(answerText) as Record<string, unknown>;
                if (documented?.validate) expect(check(documented.validate, answer), where).toEqual({ valid: true });
                if (refuse) {
                  refused++;
                  expect(response.status, where).toBe(documentedError(invalidCode, op).status);
                  expect(answer.error_code, where).toBe(invalidCode);
                  expect(String(answer.error_message), where).not.toMatch(/must NOT|must match pattern|must have required/);
                  if (hostile.mustRefuse)
                    expect(String(answer.error_message), where).toMatch(hostile.refusal ?? /__proto__|more than once/);
                  expect(partnerRequests().length, `${where}: a refused body reached a partner`).toBe(partnerBefore);
                  expect(await storeCounts(), `${where}: a refused body changed the store`).toBe(storeBefore);
                } else if (
                  response.status === 200 &&
                  hostile.injected &&
                  !forwardedAt(op.api, requestSchemaRef(op), base, hostile.injected.at)
                ) {
                  for (const request of partnerRequests().slice(partnerBefore)) {
                    expect(
                      request.raw.includes(sentinelOf(op)),
                      `${where}: an unknown member reached a partner: ${request.raw.slice(0, 300)}`,
                    ).toBe(false);
                  }
                }
              }),
              { seed: SEED ^ hash(`${op.operationId}:${name}`), numRuns: RUNS, endOnFailure: true },
            );
            expect(process.memoryUsage().heapUsed - heapAtStart).toBeLessThan(HEAP_GROWTH_BOUND);
            if (name !== 'numbers of any shape') expect(refused, 'the generator made no case the platform must refuse').toBeGreaterThan(0);
          },
          TIMEOUT_MS,
        );
      }
    }
  });
});
describe(`hostile inbound bodies on the partner kit's routers (HOSTILE_SEED=${SEED}, ${RUNS} runs per property)`, () => {
  const clientId = 'ha_hostile';
  const appId = 'ma_hostile';
  const secretKey = 'hostile-secret';
  const calls: Array<{ operationId: string; input: unknown }> = [];
  let server: Server;
  let url = '';

  /** The operation's first 200 example without an error_code: what a handler that accepts answers. */
  function successAnswer(operationId: string): unknown {
    const op = contractOperations().get(operationId)!;
    const [example] = responseExamples(op).filter((value) => !(isJsonObject(value) && Object.hasOwn(value, 'error_code')));
    return example;
  }

  beforeAll(async () => {
    const handle = (input: unknown, ctx: { operationId: string }) => {
      calls.push({ operationId: ctx.operationId, input });
      return successAnswer(ctx.operationId) as never;
    };
    const app = express();
    // Each router under its API's name: both serve E7 at the contract's suggested path /events.
    app.use(
      '/hostapp',
      createHostappRouter({
        clientId,
        secretKey,
        idempotency: 'off',
        logger: quiet,
        handlers: { createOrderPayment: handle, getPaymentStatus: handle, receiveEvent: handle },
      }),
    );
    app.use(
      '/miniapp',
      createMiniappRouter({
        appId,
        secretKey,
        idempotency: 'off',
        logger: quiet,
        handlers: { receiveOrderCompletion: handle, receiveEvent: handle },
      }),
    );
    server = await new Promise((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('the contract has partner operations with a body', () => {
    expect(partnerKitOperations.length).toBeGreaterThanOrEqual(4);
  });

  for (const op of partnerKitOperations) {
    for (const [name, generator] of generators) {
      it(
        `${op.operationId}: ${name}`,
        async () => {
          const base = baseBody(op);
          const codes = pipelineErrorCodes(op);
          const headers: Record<string, string> = {
            'content-type': 'application/json',
            authorization:
              op.api === 'hostapp' ? prefixedAuthorization('Token', clientId, secretKey) : basicAuthorization(appId, secretKey),
          };
          for (const parameter of parametersOf(op.api, op.operationId)) {
            if (parameter.in === 'header' && parameter.example !== undefined) headers[parameter.name] = String(parameter.example);
          }
          const heapAtStart = process.memoryUsage().heapUsed;
          await fc.assert(
            fc.asyncProperty(generator(base, sentinelOf(op)), async (hostile) => {
              const refuse = mustRefuse(op, hostile) || numberVerdict(op, hostile, numberPath(hostile, base)) === 'refuse';
              const callsBefore = calls.length;
              const response = await fetch(`${url}/${op.api}${op.path}`, { method: 'POST', headers, body: hostile.text });
              const answerText = await response.text();
              const where = `${op.operationId} ${hostile.label}: answered ${response.status} ${answerText.slice(0, 300)}`;
              expect(response.status, where).toBe(200);
              const answer = parseLossless(answerText) as Record<string, unknown>;
              if (refuse) {
                expect(answer, where).toEqual({ error_code: codes.invalidRequest });
                expect(calls.length, `${where}: the handler ran on a refused body`).toBe(callsBefore);
              } else if (calls.length > callsBefore) {
                const { input } = calls[calls.length - 1]!;
                // The handler gets plain objects: own members only, the prototype never set from input.
                expect(ownJson(input), where).toBe(true);
              }
            }),
            { seed: SEED ^ hash(`kit:${op.operationId}:${name}`), numRuns: RUNS, endOnFailure: true },
          );
          expect(process.memoryUsage().heapUsed - heapAtStart).toBeLessThan(HEAP_GROWTH_BOUND);
        },
        TIMEOUT_MS,
      );
    }
  }
});

const quiet = { warn: () => undefined, error: () => undefined };

/** The operation's 200 examples, lossless, in document order. */
function responseExamples(op: OperationContract): unknown[] {
  const document = loadLosslessDocument(op.api);
  const node = documented(op.api, op.operationId).node;
  const ok = resolve(document, (node.responses as JsonObject)['200']);
  const media = (ok.content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined;
  return namedExamples(document, media).map((example) => example.value);
}

/** For a number case: the path of the member whose value was replaced (found by comparing with the base). */
function numberPath(hostile: Hostile, base: unknown): JsonPath | undefined {
  if (hostile.plain !== undefined || hostile.mustRefuse) return undefined;
  const value = parseLossless(hostile.text);
  const walk = (a: unknown, b: unknown, path: JsonPath): JsonPath | undefined => {
    if (isJsonObject(a) && isJsonObject(b)) {
      for (const key of Object.keys(a)) {
        const found = walk(a[key], b[key], [...path, key]);
        if (found) return found;
      }
      return undefined;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (const [index, item] of a.entries()) {
        const found = walk(item, b[index], [...path, index]);
        if (found) return found;
      }
      return undefined;
    }
    return stringifyLossless(a) === stringifyLossless(b) ? undefined : path;
  };
  return walk(value, base, []);
}

/** Whether every object in `value` is a plain object with no own `__proto__` member. */
function ownJson(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(ownJson);
  if (isJsonObject(value)) {
    return Object.getPrototypeOf(value) === Object.prototype && !Object.hasOwn(value, '__proto__') && Object.values(value).every(ownJson);
  }
  return true;
}

function hash(text: string): number {
  let value = 2166136261;
  for (const char of text) value = Math.imul(value ^ char.charCodeAt(0), 16777619);
  return value >>> 0;
}
