/**
 * Contract fuzzing of every platform operation with a body: valid requests generated from the
 * request schema, invalid ones made from them by breaking one rule the schema states, and
 * malformed or oddly encoded bodies. Seeded (FUZZ_SEED) and reproducible; FUZZ_RUNS requests
 * per operation (default 2,500: every mutation of the example and every odd body, then generated
 * cases; 10,000 reached no line, branch or function of `src/` that 2,500 or even 1,000 did not,
 * bench/results/test-suite-wall-time.md; FUZZ_RUNS=10000 or more for a deeper run by hand).
 * One test file per operation (`test/resilience/fuzz-*.test.ts`),
 * each on a platform of its own, so the five run side by side (ADR 0044); `fuzzOperation` is what
 * each of them runs.
 */
import { Agent, request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../../generated/types/platform.js';
import { loadDocument, resolve, type JsonObject } from '../../../src/contract/documents.js';
import { parseLossless, stringifyLossless } from '../../../src/contract/json.js';
import { copyJson } from '../../../src/contract/jsonPath.js';
import { check, operation } from '../../../src/contract/operations.js';
import { invalidInputCode } from '../../../src/contract/errors.js';
import { arbitraryFor } from './contractArbitrary.js';
import { effective } from './contractSchema.js';
import { HOSTAPP_PATHS, MINIAPP_PATHS } from './fakePartner.js';
import { mutationsOf, type Mutation } from './mutations.js';
import { oddBodies } from './oddBodies.js';
import { startHarness, eventually, type Harness } from './platformHarness.js';
import { PARTIES, hostappBasicAuthorization, hostappTokenAuthorization, miniappAuthorization } from './registry.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2_500);
const CONCURRENCY = 16;
const VALID_SHARE = 0.25;
const ODD_SHARE = 0.08;

type Kind = 'valid' | 'invalid' | 'odd';
interface Case {
  kind: Kind;
  label: string;
  /** Made when the case is sent: odd bodies can be large. */
  bytes: () => Uint8Array;
  contentType: string | undefined;
  /** For valid cases: the body as sent. */
  body?: unknown;
}
interface Outcome {
  status: number;
  body: unknown;
}

/** A small seeded PRNG (mulberry32), so every choice is reproducible from FUZZ_SEED. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hashOf(text: string): number {
  let hash = 2166136261;
  for (const char of text) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619);
  return hash >>> 0;
}

function requestSchemaRef(operationId: string): unknown {
  const document = loadDocument('platform');
  for (const pathItem of Object.values(document.paths)) {
    for (const op of Object.values(pathItem) as JsonObject[]) {
      if (op?.operationId === operationId)
        return ((resolve<JsonObject>(document, op.requestBody).content as JsonObject)['application/json'] as JsonObject).schema;
    }
  }
  throw new Error(`no operation ${operationId}`);
}

function firstExample(operationId: string): unknown {
  const document = loadDocument('platform');
  for (const pathItem of Object.values(document.paths)) {
    for (const op of Object.values(pathItem) as JsonObject[]) {
      if (op?.operationId !== operationId) continue;
      const media = (resolve<JsonObject>(document, op.requestBody).content as JsonObject)['application/json'] as JsonObject;
      const [example] = Object.values(media.examples as JsonObject);
      // Re-read losslessly: the example's numbers keep their digits.
      return parseLossless(JSON.stringify(resolve<JsonObject>(document, example).value));
    }
  }
  throw new Error(`no example for ${operationId}`);
}

export interface OperationSpec {
  operationId: 'createOrderPayment' | 'getPaymentStatus' | 'completeOrder' | 'sendHostappEvent' | 'sendMiniappEvent';
  path: string;
  authorization: string;
  /** Makes a generated value a request the platform will accept: registered parties, unique keys. */
  prepare(value: Record<string, unknown>, index: number): Record<string, unknown>;
  /** Invalid variants beyond the request schema's own rules (E1's E3 item rule, ADR 0003). */
  extraMutations?(value: Record<string, unknown>): Mutation[];
  /** Whether a valid request's answer is the expected one. */
  validAnswer(outcome: Outcome, body: Record<string, unknown>): boolean;
  /** Requests the partner should have received for a 200 answer to this body. */
  partnerCallsOnSuccess(body: Record<string, unknown>, outcome: Outcome): number;
  partnerCount(harness: Harness): number;
}

function toCase(kind: Kind, label: string, body: unknown): Case {
  const bytes = Buffer.from(stringifyLossless(body));
  return { kind, label, bytes: () => bytes, contentType: 'application/json', body };
}

/** Every case for one operation: the example and all its mutations and odd bodies, then random ones up to RUNS. */
function casesFor(spec: OperationSpec): Case[] {
  const schema = requestSchemaRef(spec.operationId);
  const rng = random(SEED ^ hashOf(spec.operationId));
  const cases: Case[] = [];
  const mutationsFor = (valid: Record<string, unknown>) => [
    ...mutationsOf('platform', schema, valid),
    ...(spec.extraMutations?.(valid) ?? []),
  ];
  const example = spec.prepare(firstExample(spec.operationId) as Record<string, unknown>, -1);
  cases.push(toCase('valid', 'the contract example', example));
  for (const mutation of mutationsFor(example)) cases.push(toCase('invalid', mutation.label, mutation.body()));
  for (const odd of oddBodies(stringifyLossless(example))) cases.push({ kind: 'odd', ...odd });
  const generated = fc.sample(arbitraryFor('platform', schema), {
    seed: SEED ^ hashOf(spec.operationId),
    numRuns: Math.max(RUNS - cases.length, 1),
  });
  for (const [index, value] of generated.entries()) {
    if (cases.length >= RUNS) break;
    const valid = spec.prepare(copyJson(value) as Record<string, unknown>, index);
    const roll = rng();
    if (roll < VALID_SHARE) {
      cases.push(toCase('valid', `generated #${index}`, valid));
    } else if (roll < 1 - ODD_SHARE) {
      const mutations = mutationsFor(valid);
      const mutation = mutations[Math.floor(rng() * mutations.length)]!;
      cases.push(toCase('invalid', `generated #${index}, ${mutation.label}`, mutation.body()));
    } else {
      const odd = oddBodies(stringifyLossless(valid));
      cases.push({ kind: 'odd', ...odd[Math.floor(rng() * odd.length)]! });
    }
  }
  return cases;
}

/**
 * Sends one case over `agent`, a keep-alive pool that lives for one fuzz run only: a socket left
 * idle between runs (while the next run's cases are generated) could be closed by the platform's
 * keep-alive time-out just as it is reused, and that race is the client's, not the platform's.
 * Without an agent, the request has a connection of its own.
 */
function send(harness: Harness, spec: OperationSpec, item: Case, agent: Agent | false = false): Promise<Outcome & { bytes: Uint8Array }> {
  const bytes = item.bytes();
  const headers: Record<string, string | number> = { authorization: spec.authorization, 'content-length': bytes.length };
  if (item.contentType !== undefined) headers['content-type'] = item.contentType;
  return new Promise((resolvePromise, reject) => {
    const request = httpRequest(harness.running.url + spec.path, { method: 'POST', headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = parseLossless(text);
        } catch {
          // Judged below: a documented answer is JSON.
        }
        resolvePromise({ status: response.statusCode ?? 0, body, bytes });
      });
    });
    request.on('error', reject);
    request.end(bytes);
  });
}

export interface Report {
  sent: Record<Kind, number>;
  successes: Record<Kind, number>;
  expectedPartnerCalls: number;
  problems: string[];
}

async function fuzz(
  harness: Harness,
  spec: OperationSpec,
  onValid?: (outcome: Outcome, body: Record<string, unknown>) => void,
): Promise<Report> {
  const op = operation(spec.operationId);
  const invalidCode = invalidInputCode(op);
  const cases = casesFor(spec);
  const report: Report = {
    sent: { valid: 0, invalid: 0, odd: 0 },
    successes: { valid: 0, invalid: 0, odd: 0 },
    expectedPartnerCalls: 0,
    problems: [],
  };
  let next = 0;
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      const item = cases[index]!;
      const outcome = await send(harness, spec, item, agent);
      report.sent[item.kind]++;
      const problem = judge(op, invalidCode, spec, item, outcome);
      if (problem)
        report.problems.push(
          `case ${index} (${item.kind}: ${item.label}): ${problem}; answer ${outcome.status} ${stringifyLossless(outcome.body).slice(0, 300)}`,
        );
      if (outcome.status === 200) {
        report.successes[item.kind]++;
        const body = item.body ?? safeParse(outcome.bytes);
        report.expectedPartnerCalls += body ? spec.partnerCallsOnSuccess(body as Record<string, unknown>, outcome) : 0;
      }
      if (item.kind === 'valid') onValid?.(outcome, item.body as Record<string, unknown>);
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    agent.destroy();
  }
  return report;
}

function safeParse(bytes: Uint8Array): unknown {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    return parseLossless(text);
  } catch {
    return undefined;
  }
}

/** What is wrong with an answer, or undefined when it is what the contract promises. */
function judge(
  op: ReturnType<typeof operation>,
  invalidCode: string,
  spec: OperationSpec,
  item: Case,
  outcome: Outcome,
): string | undefined {
  if (outcome.status >= 500) return 'a 5xx answer';
  const documented = op.responses.get(String(outcome.status));
  if (!documented) return `HTTP ${outcome.status} is not documented for ${op.operationId}`;
  if (documented.validate) {
    const result = check(documented.validate, outcome.body);
    if (!result.valid) return `the body breaks the documented ${outcome.status} response: ${result.message}`;
  }
  if (item.kind === 'invalid') {
    const code = (outcome.body as { error_code?: string }).error_code;
    if (outcome.status !== 400 || code !== invalidCode) return `expected 400 ${invalidCode}`;
  }
  if (item.kind === 'valid' && !spec.validAnswer(outcome, item.body as Record<string, unknown>))
    return 'not the answer a valid request gets';
  return undefined;
}

function summary(spec: OperationSpec, report: Report, received: number): string {
  return `${spec.operationId} (FUZZ_SEED=${SEED}, FUZZ_RUNS=${RUNS}): sent ${JSON.stringify(report.sent)}, 200s ${JSON.stringify(report.successes)}, partner received ${received}, expected ${report.expectedPartnerCalls}`;
}

function expectClean(spec: OperationSpec, report: Report, received: number): void {
  const total = report.sent.valid + report.sent.invalid + report.sent.odd;
  const headline = summary(spec, report, received);
  if (report.problems.length > 0 || received !== report.expectedPartnerCalls) {
    const kinds = new Map<string, number>();
    for (const problem of report.problems) {
      const kind = problem
        .replace(/^case \d+ \((\w+)[^)]*\)/, '$1')
        .replace(/(error_message":").*$/, '$1…')
        .replace(/generated #\d+, /, '');
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    const histogram = [...kinds].sort((a, b) => b[1] - a[1]).map(([kind, count]) => `${String(count).padStart(6)}  ${kind}`);
    console.error(
      `${headline}\nreproduce with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}\nproblems by kind:\n${histogram.join('\n')}\nfirst problems:\n${report.problems.slice(0, 25).join('\n')}`,
    );
  }
  expect(total, headline).toBeGreaterThanOrEqual(RUNS);
  expect(report.sent.valid, headline).toBeGreaterThan(0);
  expect(report.sent.invalid, headline).toBeGreaterThan(0);
  expect(report.problems.slice(0, 10), `${headline}; reproduce with FUZZ_SEED=${SEED}`).toEqual([]);
  expect(received, `${headline}: no invalid request may reach the partner`).toBe(report.expectedPartnerCalls);
}

type E1 = components['schemas']['CreateOrderPaymentRequest'];
const e1Example = firstExample('createOrderPayment') as E1;
const completeItem = e1Example.order.items![0]!;
const e3ItemFields = [...effective('hostapp', [{ $ref: '#/components/schemas/HostappOrderItem' }]).required];

const knownOrders: string[] = [];
const pickOrder = (index: number, body: Record<string, unknown>) => {
  // One request in ten names an order payment nobody created: ORDER_NOT_FOUND, no partner call.
  if (knownOrders.length > 0 && (index < 0 || index % 10 !== 0))
    body.order_payment_id = knownOrders[Math.abs(index * 7919) % knownOrders.length];
  return body;
};
const createdOrderPayments = new Set<string>();
const isKnown = (body: Record<string, unknown>) => knownOrders.includes(String(body.order_payment_id));
const errorCode = (outcome: Outcome) => (outcome.body as { error_code?: string }).error_code;

const specs: Record<OperationSpec['operationId'], OperationSpec> = {
  createOrderPayment: {
    operationId: 'createOrderPayment',
    path: '/api/v1/orders/create-order-payment/',
    authorization: miniappAuthorization,
    prepare(value, index) {
      const order = value.order as Record<string, unknown>;
      if (order.miniapp_order_id !== undefined) order.miniapp_order_id = `fz-${SEED}-${index}`;
      if (Array.isArray(order.items)) order.items = order.items.map((item) => ({ ...completeItem, ...(item as object) }));
      return { ...value, app_id: PARTIES.appId, client_id: PARTIES.clientId };
    },
    extraMutations(value) {
      const items = (value.order as { items?: Array<Record<string, unknown>> }).items;
      if (!items?.length) return [];
      return e3ItemFields.map((field) => ({
        label: `order.items[0].${field}: required by E3, removed`,
        body: () => {
          const copy = copyJson(value) as { order: { items: Array<Record<string, unknown>> } };
          delete copy.order.items[0]![field];
          return copy;
        },
      }));
    },
    validAnswer: (outcome) =>
      outcome.status === 200 && typeof (outcome.body as { order_payment_id?: unknown }).order_payment_id === 'string',
    // An odd encoding of a body already accepted is the same request: E1 answers it idempotently,
    // without a second E3. Each order payment id therefore stands for exactly one E3 call.
    partnerCallsOnSuccess: (_body, outcome) => {
      const id = String((outcome.body as { order_payment_id?: unknown }).order_payment_id);
      if (createdOrderPayments.has(id)) return 0;
      createdOrderPayments.add(id);
      return 1;
    },
    partnerCount: (harness) => harness.hostapp.count(HOSTAPP_PATHS.createOrderPayment),
  },
  getPaymentStatus: {
    operationId: 'getPaymentStatus',
    path: '/api/v1/orders/get-payment-status/',
    authorization: miniappAuthorization,
    prepare: (value, index) => pickOrder(index, { ...value, app_id: PARTIES.appId, client_id: PARTIES.clientId }),
    validAnswer: (outcome, body) => (isKnown(body) ? outcome.status === 200 : errorCode(outcome) === 'ORDER_NOT_FOUND'),
    partnerCallsOnSuccess: () => 1,
    partnerCount: (harness) => harness.hostapp.count(HOSTAPP_PATHS.paymentStatus),
  },
  completeOrder: {
    operationId: 'completeOrder',
    path: '/api/v1/orders/complete-order/',
    authorization: hostappBasicAuthorization,
    prepare: (value, index) => pickOrder(index, { ...value, app_id: PARTIES.appId, client_id: PARTIES.clientId }),
    validAnswer: (outcome, body) =>
      isKnown(body) ? outcome.status === 200 || errorCode(outcome) === 'PAYMENT_STATUS_CONFLICT' : errorCode(outcome) === 'ORDER_NOT_FOUND',
    // E6 is counted per transition after the run (see the test), not per request.
    partnerCallsOnSuccess: () => 0,
    partnerCount: () => 0,
  },
  sendHostappEvent: {
    operationId: 'sendHostappEvent',
    path: '/api/v1/events/hostapp/',
    authorization: hostappTokenAuthorization,
    prepare: (value) => ({ ...value, app_id: PARTIES.appId, client_id: PARTIES.clientId }),
    validAnswer: (outcome) => outcome.status === 200 && (outcome.body as { received?: unknown }).received === true,
    partnerCallsOnSuccess: () => 1,
    partnerCount: (harness) => harness.miniapp.count(MINIAPP_PATHS.events),
  },
  sendMiniappEvent: {
    operationId: 'sendMiniappEvent',
    path: '/api/v1/events/miniapp/',
    authorization: miniappAuthorization,
    prepare: (value) => ({ ...value, app_id: PARTIES.appId, client_id: PARTIES.clientId }),
    validAnswer: (outcome) => outcome.status === 200 && (outcome.body as { received?: unknown }).received === true,
    partnerCallsOnSuccess: () => 1,
    partnerCount: (harness) => harness.hostapp.count(HOSTAPP_PATHS.events),
  },
};

const TIMEOUT = 600_000;

/**
 * The platform of one fuzz file: rate limits lifted (startHarness) and reconciliation off, since
 * a run of ten thousand requests can outlast `reconcile_after_seconds` on a busy machine, and
 * the E4 calls reconciliation makes on its own would be counted as E2's.
 */
function startFuzzHarness(): Promise<Harness> {
  return startHarness({ reconciler: { pollMs: 1_000, batchSize: 50, enabled: false } });
}

/** Defines the fuzz file of one operation: its run, then the platform still up and ready. */
export function fuzzOperation(operationId: OperationSpec['operationId'], title: string, extraChecks?: ExtraChecks): void {
  describe(`contract fuzzing (FUZZ_SEED=${SEED}, ${RUNS} requests per operation)`, () => {
    let harness: Harness;
    beforeAll(async () => {
      // A worker runs several files in one process (vitest.config.ts): the pools of this module
      // name the payments of one platform only, so they start empty with each.
      knownOrders.length = 0;
      createdOrderPayments.clear();
      harness = await startFuzzHarness();
    }, 60_000);
    afterAll(async () => {
      await harness?.close();
    }, 60_000);

    it(
      `${operationId}: ${title}`,
      async () => {
        const spec = specs[operationId];
        if (operationId === 'getPaymentStatus' || operationId === 'completeOrder') await ensureOrders(harness);
        const report = await fuzz(
          harness,
          spec,
          operationId === 'createOrderPayment'
            ? (outcome) => {
                if (outcome.status === 200) knownOrders.push(String((outcome.body as { order_payment_id: string }).order_payment_id));
              }
            : undefined,
        );
        expectClean(spec, report, spec.partnerCount(harness));
        await extraChecks?.(harness, spec, report);
        // The platform is still up and ready after all of it.
        const response = await fetch(`${harness.running.url}/readyz`);
        expect(response.status).toBe(200);
        expect(harness.running.server.listening).toBe(true);
      },
      TIMEOUT,
    );
  });
}

export type ExtraChecks = (harness: Harness, spec: OperationSpec, report: Report) => Promise<void>;

/** After completeOrder's run: every transition reached E6 exactly once. */
export const everyTransitionOnce: ExtraChecks = async (harness, spec, report) => {
  const { store } = harness.running.platform;
  await eventually(async () => (await store.outbox.countPending()) === 0, 60_000, 'the E6 outbox to drain');
  const [terminal] = await store.db.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM order_payments WHERE payment_status <> 'in_process'",
  );
  const callbacks = harness.miniapp.requests(MINIAPP_PATHS.completeOrder);
  const eventIds = new Set(callbacks.map((request) => request.headers['x-minibridge-event-id']));
  expect(callbacks.length, summary(spec, report, callbacks.length)).toBe(terminal!.count);
  expect(eventIds.size).toBe(callbacks.length);
};

/** A pool of order payments for E2 and E5 to name (filled per file, on that file’s own platform). */
async function ensureOrders(harness: Harness): Promise<void> {
  for (let index = 0; knownOrders.length < 50; index++) {
    const body = specs.createOrderPayment.prepare(copyJson(e1Example) as Record<string, unknown>, 1_000_000 + index);
    const outcome = await send(harness, specs.createOrderPayment, toCase('valid', 'pool', body));
    knownOrders.push(String((outcome.body as { order_payment_id: string }).order_payment_id));
  }
}
