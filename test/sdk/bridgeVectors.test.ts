import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bundledBridgeSchema } from '../../scripts/build-sdk.js';
import { repoRoot } from '../../scripts/lib/paths.js';
import { createAjv } from '../../src/contract/ajv.js';
import { validationView } from '../../src/contract/json.js';
import {
  CUSTOM_EVENT_REPLY_RULE,
  HOST_EVENT_RULE,
  PAY_RULES,
  actionOf,
  answersOf,
  deliveriesOf,
  readableId,
  toValue,
  valueTransportGap,
} from '../../src/shipped/bridge-conformance/vectors.js';
import {
  BRIDGE_ERROR_CODES,
  BRIDGE_PROTOCOL,
  BRIDGE_PROTOCOL_VERSION,
  createMinibridgeSdk,
  MinibridgeWebAppCustomEvent,
  PAYMENT_RESULT_STATUSES,
  type MinibridgeSdk,
  type MinibridgeSdkError,
} from '../../src/shipped/sdk/index.js';
import { HOST_MESSAGE_DEFINITIONS, isHostMessageType, type HostMessageType } from '../../src/shipped/sdk/messages.js';
import { runOnWebHost, vectors } from '../support/bridgeVectors.js';
import { flush, framePair, type FramePair } from './fakeWindows.js';

// The shared vectors (openapi/bridge.vectors.json): their format, every message in them judged by
// the bridge schema as the vector says, and the project's web host run through each of them.

const bridgeSchema = await bundledBridgeSchema();
const conformanceSchema = JSON.parse(readFileSync(path.join(repoRoot, 'generated', 'sdk', 'bridge-conformance.schema.json'), 'utf8'));
const ajv = createAjv([
  { paths: {}, components: { schemas: bridgeSchema.$defs as never } },
  { paths: {}, components: { schemas: conformanceSchema.$defs as never } },
]);
ajv.addSchema(bridgeSchema);
ajv.addSchema(conformanceSchema);
const bridge = (definition: string) => ajv.getSchema(`${bridgeSchema.$id as string}#/$defs/${definition}`)!;
const format = (definition: string) => ajv.getSchema(`${conformanceSchema.$id as string}#/$defs/${definition}`)!;

/** Judged by the platform's own validator on the exact number texts (x-decimal counts the digits written). */
function validAs(definition: string, message: unknown): boolean {
  return bridge(definition)(validationView(message)) as boolean;
}

type Message = Record<string, unknown>;
const REQUEST_DEFINITION: Record<string, string> = { pay: 'PayRequest', custom_event: 'CustomEventRequest' };

const sends = vectors.vectors.flatMap((vector) =>
  vector.steps.flatMap((step, index) => {
    const action = actionOf(step);
    return action.kind === 'send' ? [{ vector, step, index, message: action.value }] : [];
  }),
);

describe('the vectors file', () => {
  it('follows its format (bridge-conformance.schema.yaml#/$defs/Vectors)', () => {
    const validate = format('Vectors');
    expect(validate(toValue(vectors)), JSON.stringify(validate.errors)).toBe(true);
  });

  it('names rules once, gives every rule a vector, and uses only rules it names', () => {
    const ruleIds = vectors.rules.map((rule) => rule.id);
    expect(new Set(ruleIds).size).toBe(ruleIds.length);
    const used = new Set(vectors.vectors.map((vector) => vector.rule));
    for (const vector of vectors.vectors) expect(ruleIds, vector.id).toContain(vector.rule);
    // Rules the judge charges by itself (a pay_result's parts, host events) must exist too.
    for (const rule of [...Object.values(PAY_RULES), HOST_EVENT_RULE, CUSTOM_EVENT_REPLY_RULE]) expect(ruleIds).toContain(rule);
    for (const rule of ruleIds.filter((rule) => !Object.values(PAY_RULES).includes(rule as never))) expect(used, rule).toContain(rule);
  });

  it('has unique vector ids and request ids, and steps name only requests sent before them', () => {
    const vectorIds = vectors.vectors.map((vector) => vector.id);
    expect(new Set(vectorIds).size).toBe(vectorIds.length);
    const requestIds = sends.flatMap(({ message }) => readableId(message, 100) ?? []);
    expect(new Set(requestIds).size).toBe(requestIds.length);
    for (const vector of vectors.vectors) {
      const sent = new Set<string>();
      for (const step of vector.steps) {
        const action = actionOf(step);
        if (action.kind === 'send') sent.add(readableId(action.value, 100) ?? '');
        if (action.kind === 'finishPayment' || action.kind === 'answerCustomEvent') expect(sent, vector.id).toContain(action.request);
      }
    }
  });

  it('uses only error codes and statuses the bridge schema defines', () => {
    for (const vector of vectors.vectors) {
      for (const step of vector.steps) {
        const action = actionOf(step);
        if (action.kind === 'finishPayment') expect(PAYMENT_RESULT_STATUSES).toContain(action.status);
        if (action.kind === 'answerCustomEvent' && action.error) expect(Object.keys(BRIDGE_ERROR_CODES)).toContain(action.error.code);
        for (const answer of answersOf(step)) {
          const code = (answer as { error?: { code?: string } }).error?.code;
          if (code !== undefined) expect(Object.keys(BRIDGE_ERROR_CODES), vector.id).toContain(code);
        }
      }
    }
  });

  it('keeps number texts exactly (read losslessly) and marks the vectors only text can carry', () => {
    expect(readFileSync(path.join(repoRoot, 'openapi', 'bridge.vectors.json'), 'utf8')).toContain('"amount": 12345678901234567.89');
    const textOnly = vectors.vectors.filter((vector) => valueTransportGap(vector) !== undefined).map((vector) => vector.id);
    expect(textOnly).toEqual(['invalid-amount-exponent', 'pay-exact-number-text']);
  });
});

describe('every message of the vectors against the bridge schema', () => {
  it.each(sends.map((send) => [`${send.vector.id} step ${send.index + 1}`, send] as const))('%s', (_name, { step, message }) => {
    const answers = answersOf(step) as Message[];
    const codes = answers.map((answer) => (answer.error as { code?: string } | undefined)?.code);
    const object = message !== null && typeof message === 'object' && !Array.isArray(message) ? (message as Message) : undefined;
    if (!object || object.protocol !== BRIDGE_PROTOCOL) {
      expect(answers, 'other traffic is never answered').toEqual([]);
      return;
    }
    const envelopeOk = validAs('Envelope', object);
    if (codes.includes('INVALID_MESSAGE')) {
      const definition = REQUEST_DEFINITION[object.type as string];
      expect(
        !envelopeOk || (definition !== undefined && !validAs(definition, object)),
        'an INVALID_MESSAGE vector must break the schema',
      ).toBe(true);
      expect(deliveriesOf(step)).toEqual([]);
    } else if (codes.includes('UNSUPPORTED_VERSION')) {
      expect(envelopeOk).toBe(true);
      expect(toValue(object.version)).not.toBe(BRIDGE_PROTOCOL_VERSION);
    } else if (deliveriesOf(step).length > 0 || codes.includes('PAYMENT_IN_PROGRESS')) {
      expect(validAs(REQUEST_DEFINITION[object.type as string]!, object), 'a request the host handles is valid').toBe(true);
    } else if (isHostMessageType(object.type)) {
      // An answer or event sent to the host: ignored whatever its version or envelope.
      expect(answers).toEqual([]);
      expect(deliveriesOf(step)).toEqual([]);
    } else if (readableId(object, 100) === undefined) {
      expect(envelopeOk, 'an unreadable id breaks the envelope').toBe(false);
    } else {
      // Ignored types: the envelope is fine, the type is not one the host handles.
      expect(envelopeOk).toBe(true);
      expect(Object.keys(REQUEST_DEFINITION)).not.toContain(object.type);
    }
    for (const delivery of deliveriesOf(step)) {
      if ('payment' in delivery) expect(validAs('PaymentData', delivery.payment)).toBe(true);
      else expect(validAs('CustomEventData', delivery.customEvent.data)).toBe(true);
    }
  });

  it('every expected answer, with an envelope and its free text filled in, is a valid message of its type', () => {
    let count = 0;
    for (const vector of vectors.vectors) {
      for (const step of vector.steps) {
        for (const answer of answersOf(step) as Message[]) {
          const filled: Message = { protocol: BRIDGE_PROTOCOL, version: BRIDGE_PROTOCOL_VERSION, id: 'host-1', ...answer };
          const error = filled.error as Message | undefined;
          if (filled.type === 'error' && error) filled.error = { message: 'the host says why', ...error };
          expect(
            validAs(HOST_MESSAGE_DEFINITIONS[filled.type as HostMessageType], filled),
            `${vector.id}: ${JSON.stringify(toValue(answer))}`,
          ).toBe(true);
          count += 1;
        }
      }
    }
    expect(count).toBeGreaterThan(20);
  });
});

describe('the web host bridge (createHostBridge) runs every vector a JavaScript value can carry', () => {
  const runnable = vectors.vectors.filter((vector) => valueTransportGap(vector) === undefined);
  it.each(runnable.map((vector) => [vector.id, vector] as const))('%s', async (_id, vector) => {
    expect(await runOnWebHost(vector)).toEqual([]);
  });
});

describe('the JS SDK (miniapp side) against the vectors', () => {
  type Sent = { vector: string; message: Message; step: (typeof sends)[number]['step']; laterAnswers: Message[] };
  /** Each request of the vectors a JavaScript value can carry, with every answer the vector expects for it. */
  const requests: Sent[] = vectors.vectors
    .filter((vector) => valueTransportGap(vector) === undefined)
    .flatMap((vector) =>
      vector.steps.flatMap((step) => {
        const action = actionOf(step);
        const message = action.kind === 'send' ? (toValue(action.value) as Message) : undefined;
        if (!message || typeof message !== 'object' || message.protocol !== BRIDGE_PROTOCOL || typeof message.id !== 'string') return [];
        const laterAnswers = vector.steps
          .flatMap((other) => answersOf(other) as Message[])
          .filter((answer) => answer.replyTo === message.id);
        return [{ vector: vector.id, message, step, laterAnswers: laterAnswers.map((answer) => toValue(answer) as Message) }];
      }),
    );
  const handled = (sent: Sent) => deliveriesOf(sent.step).length > 0;
  const refusedAs = (sent: Sent, code: string) => sent.laterAnswers.some((answer) => (answer.error as Message | undefined)?.code === code);
  /** Differs from what the SDK makes only in what the vector is about (not in the envelope the SDK writes itself). */
  const sdkShaped = (message: Message, members: string[]) =>
    message.version === BRIDGE_PROTOCOL_VERSION &&
    Object.keys(message).every((key) => ['protocol', 'version', 'id', 'type', ...members].includes(key));

  let pair: FramePair;
  let sdk: MinibridgeSdk;
  beforeEach(() => {
    pair = framePair('https://host.example', 'https://miniapp.example');
    sdk = createMinibridgeSdk({ window: pair.miniapp });
  });
  afterEach(() => sdk.close());

  function lastPosted(): Message {
    return pair.toHost.at(-1)!.message as Message;
  }
  /** Posts a vector's expected answer as a host would: its envelope, and the host's own words where the vector leaves them free. */
  function hostAnswers(answer: Message, replyTo: string): void {
    const error = answer.type === 'error' ? { error: { message: 'the host says why', ...(answer.error as Message) } } : {};
    pair.frame.postMessage(
      { protocol: BRIDGE_PROTOCOL, version: BRIDGE_PROTOCOL_VERSION, id: 'host-1', ...answer, ...error, replyTo },
      '*',
    );
  }
  const settled = <T>(promise: Promise<T>): Promise<{ value?: T; error?: MinibridgeSdkError }> =>
    promise.then(
      (value) => ({ value }),
      (error: MinibridgeSdkError) => ({ error }),
    );
  const withoutId = ({ id: _id, ...rest }: Message) => rest;

  const pays = requests.filter((sent) => sent.message.type === 'pay' && (handled(sent) || refusedAs(sent, 'PAYMENT_IN_PROGRESS')));
  it.each(pays.map((sent) => [`${sent.vector} ${sent.message.id}`, sent] as const))(
    'pay: %s is the message the SDK sends, and its answer settles pay',
    async (_name, sent) => {
      const result = settled(sdk.pay(sent.message.paymentData as never));
      expect(withoutId(lastPosted())).toEqual(withoutId(sent.message));
      const answer = sent.laterAnswers[0]!;
      hostAnswers(answer, lastPosted().id as string);
      const outcome = await result;
      if (answer.type === 'pay_result') expect(outcome).toEqual({ value: { status: (answer.paymentData as Message).status } });
      else expect(outcome.error).toMatchObject({ code: 'HOST_ERROR', hostCode: (answer.error as Message).code });
    },
  );

  const badPays = requests.filter(
    (sent) => sent.message.type === 'pay' && refusedAs(sent, 'INVALID_MESSAGE') && sdkShaped(sent.message, ['paymentData']),
  );
  it.each(badPays.map((sent) => [`${sent.vector} ${sent.message.id}`, sent] as const))(
    'pay: %s is refused by the SDK before anything is sent',
    async (_name, sent) => {
      const outcome = await settled(sdk.pay(sent.message.paymentData as never));
      expect(outcome.error?.code).toMatch(/^INVALID_/);
      expect(pair.toHost).toEqual([]);
    },
  );

  const events = requests.filter((sent) => sent.message.type === 'custom_event' && handled(sent));
  it.each(events.map((sent) => [`${sent.vector} ${sent.message.id}`, sent] as const))(
    'custom event: %s is what send/sendPromise sends, and its answer settles it',
    async (_name, sent) => {
      const data = sent.message.data as never;
      if (sent.message.expectsReply === false) {
        sdk.send(MinibridgeWebAppCustomEvent, data);
        expect(withoutId(lastPosted())).toEqual(withoutId(sent.message));
        return;
      }
      const result = settled(sdk.sendPromise(MinibridgeWebAppCustomEvent, data));
      expect(withoutId(lastPosted())).toEqual(withoutId(sent.message));
      const answer = sent.laterAnswers[0]!;
      hostAnswers(answer, lastPosted().id as string);
      const outcome = await result;
      if (answer.ok === true) expect(outcome).toEqual({ value: answer.result });
      else expect(outcome.error).toMatchObject({ code: 'HOST_REJECTED', hostCode: (answer.error as Message).code });
    },
  );

  const badEvents = requests.filter(
    (sent) =>
      sent.message.type === 'custom_event' &&
      refusedAs(sent, 'INVALID_MESSAGE') &&
      sdkShaped(sent.message, ['eventName', 'data', 'expectsReply']) &&
      'expectsReply' in sent.message,
  );
  it.each(badEvents.map((sent) => [`${sent.vector} ${sent.message.id}`, sent] as const))(
    'custom event: %s is refused by the SDK before anything is sent',
    async (_name, sent) => {
      const outcome = await settled(sdk.sendPromise(sent.message.eventName as never, sent.message.data as never));
      expect(outcome.error?.code).toMatch(/^(UNKNOWN_EVENT_NAME|INVALID_EVENT_DATA)$/);
      expect(pair.toHost).toEqual([]);
    },
  );

  it('every refusal a vector expects (INVALID_MESSAGE, UNSUPPORTED_VERSION, PAYMENT_IN_PROGRESS) rejects a pending pay with HOST_ERROR and its code', async () => {
    const refusals = vectors.vectors
      .flatMap((vector) => vector.steps.flatMap((step) => answersOf(step) as Message[]))
      .filter((answer) => answer.type === 'error');
    const codes = new Set(refusals.map((answer) => (answer.error as Message).code));
    expect([...codes].sort()).toEqual(['INVALID_MESSAGE', 'PAYMENT_IN_PROGRESS', 'UNSUPPORTED_VERSION']);
    for (const answer of refusals) {
      const result = settled(sdk.pay({ amount: '1', currency: 'VND', orderPaymentId: 'hop_sdk' }));
      hostAnswers(toValue(answer) as Message, lastPosted().id as string);
      expect((await result).error).toMatchObject({ code: 'HOST_ERROR', hostCode: (answer.error as Message).code });
    }
  });

  it('the host event of the vectors reaches subscribe as event.detail', async () => {
    const hostEvents = vectors.vectors
      .flatMap((vector) => vector.steps.flatMap((step) => answersOf(step) as Message[]))
      .filter((answer) => answer.type === 'host_event');
    expect(hostEvents.length).toBeGreaterThan(0);
    const seen: unknown[] = [];
    sdk.subscribe((event) => seen.push(event.detail));
    for (const event of hostEvents)
      pair.frame.postMessage(
        { protocol: BRIDGE_PROTOCOL, version: BRIDGE_PROTOCOL_VERSION, id: 'host-2', ...(toValue(event) as Message) },
        '*',
      );
    await flush();
    expect(seen).toEqual(hostEvents.map((event) => toValue(event.detail)));
  });

  it('covers the requests it should: every handled pay and custom event, and the refusals the SDK can make itself', () => {
    expect(pays.length).toBeGreaterThanOrEqual(4);
    expect(events.length).toBeGreaterThanOrEqual(5);
    expect(badPays.length).toBeGreaterThanOrEqual(9);
    expect(badEvents.map((sent) => sent.message.id)).toEqual(['i-14', 'i-16']);
  });
});
