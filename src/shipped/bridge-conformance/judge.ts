import { isLosslessNumber } from 'lossless-json';
import {
  BRIDGE_PROTOCOL,
  BRIDGE_PROTOCOL_VERSION,
  MESSAGE_ID_MAX_LENGTH,
  PAY_RESULT_MEMBERS,
  PAYMENT_RESULT_STATUSES,
} from '../../../generated/sdk/bridge-contract.js';
import { HOST_MESSAGE_DEFINITIONS, isHostMessageType } from '../sdk/messages.js';
import { describeViolations, validateMessage } from '../sdk/validation.js';
import { CUSTOM_EVENT_REPLY_RULE, PAY_RULES, readableId, toValue, type ExpectedAnswer, type Vectors } from './vectors.js';

/**
 * How a host app's answers are judged against the vectors' expected answers: by runners that
 * script the host app (exactly) and by the conformance page (members the host chooses only
 * against the bridge schema). One judge for both, so the page and the tests agree.
 */

/** `text`: numbers compare by their text (`125000.50` is not `125000.5`); `double`: as JavaScript numbers. */
export type NumberComparison = 'text' | 'double';

export interface JudgeOptions {
  vectors: Pick<Vectors, 'hostChosen' | 'freeText'>;
  /** Compare the members the host chooses (`hostChosen`) by the schema only. */
  relaxHostChosen: boolean;
  numbers: NumberComparison;
}

/** One way a host's answers break a rule. */
export interface Finding {
  rule: string;
  reason: string;
}

const ENVELOPE_MEMBERS = new Set(['protocol', 'version', 'id']);

/** A number's text: a LosslessNumber's as read, a JavaScript number's shortest (`String(n)`). */
function numberText(value: unknown): string | undefined {
  if (isLosslessNumber(value)) return value.value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !isLosslessNumber(value);
}

/** Where two JSON values differ, or undefined when they are the same value. */
export function jsonDifference(expected: unknown, actual: unknown, numbers: NumberComparison, path = ''): string | undefined {
  const at = path === '' ? 'the value' : path;
  const expectedNumber = numberText(expected);
  if (expectedNumber !== undefined) {
    const actualNumber = numberText(actual);
    if (actualNumber === undefined) return `${at} is ${describe(actual)}, not the number ${expectedNumber}`;
    const same = numbers === 'text' ? expectedNumber === actualNumber : Number(expectedNumber) === Number(actualNumber);
    return same ? undefined : `${at} is the number ${actualNumber}, not ${expectedNumber}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${at} is ${describe(actual)}, not an array`;
    if (actual.length !== expected.length) return `${at} has ${actual.length} items, not ${expected.length}`;
    for (let index = 0; index < expected.length; index++) {
      const difference = jsonDifference(expected[index], actual[index], numbers, `${path}[${index}]`);
      if (difference) return difference;
    }
    return undefined;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return `${at} is ${describe(actual)}, not an object`;
    for (const key of Object.keys(expected)) {
      if (!Object.hasOwn(actual, key)) return `${join(path, key)} is missing`;
      const difference = jsonDifference(expected[key], actual[key], numbers, join(path, key));
      if (difference) return difference;
    }
    const extra = Object.keys(actual).find((key) => !Object.hasOwn(expected, key));
    return extra === undefined ? undefined : `the member ${join(path, extra)} was added`;
  }
  return expected === actual ? undefined : `${at} is ${describe(actual)}, not ${describe(expected)}`;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** A short description of a value for a finding (`the string "125000.5"`, `the number 125001`). */
export function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  const number = numberText(value);
  if (number !== undefined) return `the number ${number}`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)}`;
  if (value === null || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/**
 * Why an answer is not the expected one, or undefined when it is: the envelope (protocol marker,
 * the host's version, an id of its own), each member the vector gives (host-chosen ones by the
 * schema only when relaxed, free-text ones by the schema only), no member the vector does not
 * give, and the bridge schema of its type.
 */
export function answerMismatch(expected: ExpectedAnswer, actual: unknown, options: JudgeOptions): string | undefined {
  if (!isObject(actual)) return `the answer is ${describe(actual)}, not a message`;
  const envelope = envelopeProblem(actual, (expected as { version?: unknown }).version);
  if (envelope) return envelope;
  if (actual.type !== expected.type) return `answered ${describeMessage(actual)} where ${describeExpected(expected)} was expected`;
  const type = expected.type;
  const skip = new Set<string>([
    ...(options.vectors.freeText[type] ?? []),
    ...(options.relaxHostChosen ? (options.vectors.hostChosen[type] ?? []) : []),
  ]);
  const difference = membersDifference(expected as Record<string, unknown>, actual, skip, options.numbers, '');
  if (difference) return difference;
  return schemaProblem(actual);
}

/** Compares members, leaving the skipped paths to the schema. */
function membersDifference(
  expected: Record<string, unknown>,
  actual: Record<string, unknown>,
  skip: ReadonlySet<string>,
  numbers: NumberComparison,
  path: string,
): string | undefined {
  for (const key of Object.keys(expected)) {
    const at = join(path, key);
    // Envelope members are judged apart; skipped ones (host-chosen, free text) by the schema, which says what must be there.
    if ((path === '' && ENVELOPE_MEMBERS.has(key)) || skip.has(at)) continue;
    if (!Object.hasOwn(actual, key)) return `${at} is missing`;
    const inner = expected[key];
    const difference =
      isObject(inner) && isObject(actual[key]) && [...skip].some((skipped) => skipped.startsWith(`${at}.`))
        ? membersDifference(inner, actual[key] as Record<string, unknown>, skip, numbers, at)
        : jsonDifference(inner, actual[key], numbers, at);
    if (difference) return difference;
  }
  const extra = Object.keys(actual).find(
    (key) => !Object.hasOwn(expected, key) && !(path === '' && ENVELOPE_MEMBERS.has(key)) && !skip.has(join(path, key)),
  );
  return extra === undefined ? undefined : `the member ${join(path, extra)} was added`;
}

/** The protocol marker, the host's protocol version (or the one the vector gives) and a quotable id of its own. */
export function envelopeProblem(message: Record<string, unknown>, version: unknown = undefined): string | undefined {
  if (message.protocol !== BRIDGE_PROTOCOL) return `protocol is ${describe(message.protocol)}, not ${JSON.stringify(BRIDGE_PROTOCOL)}`;
  const expectedVersion = numberText(version) ?? String(BRIDGE_PROTOCOL_VERSION);
  if (numberText(message.version) !== expectedVersion) return `version is ${describe(message.version)}, not ${expectedVersion}`;
  if (readableId(message, MESSAGE_ID_MAX_LENGTH) === undefined)
    return `id is ${describe(message.id)}, not a string of 1 to ${MESSAGE_ID_MAX_LENGTH} characters`;
  return undefined;
}

/** The bridge schema's verdict on a message of a known answer type. */
export function schemaProblem(message: Record<string, unknown>): string | undefined {
  if (!isHostMessageType(message.type)) return `${describe(message.type)} is not a message a host app sends`;
  const definition = HOST_MESSAGE_DEFINITIONS[message.type];
  const check = validateMessage(definition, toValue(message));
  return check.ok ? undefined : `it breaks the bridge schema (${definition}): ${describeViolations(check.violations)}`;
}

export function describeMessage(message: Record<string, unknown>): string {
  const error = message.error as { code?: unknown } | undefined;
  return message.type === 'error' && error && typeof error.code === 'string' ? `error ${error.code}` : String(message.type);
}

function describeExpected(expected: ExpectedAnswer): string {
  const error = (expected as { error?: { code?: unknown } }).error;
  return expected.type === 'error' && error && typeof error.code === 'string' ? `error ${error.code}` : expected.type;
}

/**
 * The findings on the answers to one `pay` whose expected answer is a `pay_result`, each under
 * the pay rule it breaks: no pay_result (pay-answered), a second answer (pay-answered-once),
 * status missing or not one of the schema's (pay-status), any other member of paymentData
 * changed, added or dropped (pay-data-unchanged). `judged` lists the rules the answers let it
 * judge: without a pay_result only pay-answered.
 */
export function payFindings(
  expected: ExpectedAnswer,
  answers: readonly unknown[],
  options: JudgeOptions,
): { findings: Finding[]; judged: string[] } {
  const findings: Finding[] = [];
  const first = answers[0];
  if (!isObject(first)) {
    return {
      findings: [{ rule: PAY_RULES.answered, reason: first === undefined ? 'no answer' : `the answer is ${describe(first)}` }],
      judged: [PAY_RULES.answered],
    };
  }
  if (first.type !== 'pay_result') {
    findings.push({ rule: PAY_RULES.answered, reason: `answered with ${describeMessage(first)} instead of a pay_result` });
    return { findings, judged: [PAY_RULES.answered] };
  }
  const envelope = envelopeProblem(first) ?? topLevelExtra(first);
  if (envelope) findings.push({ rule: PAY_RULES.answered, reason: envelope });
  const expectedData = (expected as { paymentData?: Record<string, unknown> }).paymentData ?? {};
  const actualData = first.paymentData;
  if (!isObject(actualData)) {
    findings.push({ rule: PAY_RULES.dataUnchanged, reason: `paymentData is ${describe(actualData)}` });
  } else {
    const status = actualData.status;
    if (!(PAYMENT_RESULT_STATUSES as readonly unknown[]).includes(status)) {
      findings.push({
        rule: PAY_RULES.status,
        reason: `paymentData.status is ${describe(status)}, not one of ${PAYMENT_RESULT_STATUSES.join(', ')}`,
      });
    } else if (!options.relaxHostChosen && status !== expectedData.status) {
      findings.push({ rule: PAY_RULES.status, reason: `paymentData.status is ${describe(status)}, not ${describe(expectedData.status)}` });
    }
    const { status: _expectedStatus, ...sent } = expectedData;
    const { status: _actualStatus, ...returned } = actualData;
    const changed = jsonDifference(sent, returned, options.numbers, 'paymentData');
    if (changed) findings.push({ rule: PAY_RULES.dataUnchanged, reason: changed });
  }
  if (answers.length > 1) {
    findings.push({
      rule: PAY_RULES.answeredOnce,
      reason: `answered ${answers.length} times: ${answers.map((answer) => (isObject(answer) ? describeMessage(answer) : describe(answer))).join(', ')}`,
    });
  }
  return { findings, judged: [PAY_RULES.answered, PAY_RULES.answeredOnce, PAY_RULES.status, PAY_RULES.dataUnchanged] };
}

function topLevelExtra(message: Record<string, unknown>): string | undefined {
  const extra = Object.keys(message).find((key) => !(PAY_RESULT_MEMBERS as readonly string[]).includes(key));
  return extra === undefined ? undefined : `the pay_result has a member the schema does not know: ${extra}`;
}

/**
 * The findings on the answers to one custom event that expects a reply: whether exactly one
 * answer names it (the vector's rule: with several requests open, a wrong `replyTo` shows as one
 * request unanswered and another answered twice), and whether that answer is a valid
 * custom_event_result (custom-event-reply), so a host whose results break the schema fails that
 * rule alone.
 */
export function customEventFindings(
  expected: ExpectedAnswer,
  answers: readonly unknown[],
  vectorRule: string,
  options: JudgeOptions,
): { findings: Finding[]; judged: string[] } {
  const judged = [...new Set([vectorRule, CUSTOM_EVENT_REPLY_RULE])];
  if (answers.length === 0) return { findings: [{ rule: vectorRule, reason: 'no custom_event_result names it' }], judged };
  const findings: Finding[] = [];
  if (answers.length > 1) findings.push({ rule: vectorRule, reason: `${answers.length} answers name it` });
  const first = answers[0];
  if (isObject(first) && first.type !== 'custom_event_result') {
    findings.push({ rule: vectorRule, reason: `answered with ${describeMessage(first)} instead of a custom_event_result` });
    return { findings, judged };
  }
  const mismatch = answerMismatch(expected, first, options);
  if (mismatch) findings.push({ rule: CUSTOM_EVENT_REPLY_RULE, reason: mismatch });
  return { findings, judged };
}
