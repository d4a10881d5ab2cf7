import { isLosslessNumber, parse, stringify, type LosslessNumber } from 'lossless-json';
import type { components } from '../../../generated/sdk/bridge-conformance-types.js';

/**
 * The shared vectors (openapi/bridge.vectors.json, format `Vectors` of
 * openapi/bridge-conformance.schema.yaml, ADR 0040): read without losing a digit, and turned into
 * what each transport carries.
 */
type Schemas = components['schemas'];
export type Vectors = Schemas['Vectors'];
export type Vector = Schemas['Vector'];
export type Rule = Schemas['Rule'];
export type Step = Schemas['Step'];
export type ExpectedAnswer = Schemas['Answers'][number];
export type Delivery = Schemas['Deliveries'][number];
export type Waiting = Schemas['Waiting'];
export type WaitingFor = Schemas['WaitingFor'];
export type Report = Schemas['Report'];
export type ReportCheck = Schemas['ReportCheck'];
export type ReportFailure = Schemas['ReportFailure'];
export type RunList = Schemas['RunList'];

/** The rules the judge names itself, beside each vector's own rule; the vectors file must define them. */
export const PAY_RULES = {
  answered: 'pay-answered',
  answeredOnce: 'pay-answered-once',
  status: 'pay-status',
  dataUnchanged: 'pay-data-unchanged',
} as const;
export const HOST_EVENT_RULE = 'host-event-subscribe';
export const CUSTOM_EVENT_REPLY_RULE = 'custom-event-reply';

/** Reads the vectors file; every number stays a LosslessNumber holding its text as written. */
export function readVectors(text: string): Vectors {
  return parse(text) as Vectors;
}

/** What one step does. */
export type StepAction =
  | { kind: 'send'; value: unknown }
  | { kind: 'sendText'; text: string }
  | { kind: 'finishPayment'; request: string; status: string }
  | { kind: 'sendHostEvent'; detail: unknown }
  | {
      kind: 'answerCustomEvent';
      request: string;
      ok: boolean;
      result: unknown;
      hasResult: boolean;
      error?: { code: string; message: string };
    };

export function actionOf(step: Step): StepAction {
  if ('toHost' in step) return { kind: 'send', value: step.toHost };
  if ('toHostText' in step) return { kind: 'sendText', text: step.toHostText };
  if ('host' in step) {
    const { answerCustomEvent, ok, error } = step.host;
    return { kind: 'answerCustomEvent', request: answerCustomEvent, ok, result: step.host.result, hasResult: 'result' in step.host, error };
  }
  if ('finishPayment' in step.user) return { kind: 'finishPayment', request: step.user.finishPayment, status: step.user.status };
  return { kind: 'sendHostEvent', detail: step.user.sendHostEvent.detail };
}

/** True for a step done by the host app or the person holding the phone (not a message the miniapp sends). */
export function isHostSide(action: StepAction): boolean {
  return action.kind === 'finishPayment' || action.kind === 'sendHostEvent' || action.kind === 'answerCustomEvent';
}

export function answersOf(step: Step): ExpectedAnswer[] {
  return step.answers ?? [];
}

export function deliveriesOf(step: Step): Delivery[] {
  return 'delivered' in step ? (step.delivered ?? []) : [];
}

/**
 * Why a vector cannot run where messages travel as JavaScript values (an iframe's postMessage, a
 * web host's handlers): one of its numbers has no JavaScript number with the same text
 * (`125000.50`, `1E-7`, 20 digits). Undefined when it can.
 */
export function valueTransportGap(vector: Vector): string | undefined {
  let gap: string | undefined;
  walk(vector.steps, (number) => {
    if (gap === undefined && String(Number(number.value)) !== number.value)
      gap = `the number ${number.value} cannot travel as a JavaScript value with its digits`;
  });
  return gap;
}

function walk(value: unknown, visit: (number: LosslessNumber) => void): void {
  if (isLosslessNumber(value)) visit(value);
  else if (Array.isArray(value)) for (const item of value) walk(item, visit);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) walk(item, visit);
}

/** The value as JavaScript holds it: LosslessNumbers become numbers (exact only where valueTransportGap found none). */
export function toValue(value: unknown): unknown {
  if (isLosslessNumber(value)) return Number(value.value);
  if (Array.isArray(value)) return value.map(toValue);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toValue(item)]));
  return value;
}

/** The value's JSON text, every number as written in the vectors file. */
export function toText(value: unknown): string {
  return stringify(value) ?? 'undefined';
}

/** A message `id` a receiver can quote (`$defs/MessageId`: a string of 1 to 100 characters), or undefined. */
export function readableId(message: unknown, maxLength: number): string | undefined {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return undefined;
  const id = (message as { id?: unknown }).id;
  if (typeof id !== 'string') return undefined;
  const length = [...id].length;
  return length >= 1 && length <= maxLength ? id : undefined;
}

/** Every rule the vectors name, in the file's order, for a report with one check per rule. */
export function ruleIds(vectors: Vectors): string[] {
  return vectors.rules.map((rule) => rule.id);
}
