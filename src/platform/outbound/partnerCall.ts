import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { operations as HostappOperations } from '../../../generated/types/hostapp.js';
import type { operations as MiniappOperations } from '../../../generated/types/miniapp.js';
import { conforms, explain, operation } from '../../contract/operations.js';
import { mayHoldUnstorableText, maxJsonDepth, readLossless, scanJson, unstorableText, type JsonText } from '../../contract/json.js';
import { signRequest } from '../../wire/signing.js';
import { AddressRefused } from './addressPolicy.js';
import { AnswerTooLargeError, httpCall, type HttpCallInit } from './httpCall.js';
import { partnerUrl } from './partnerUrl.js';
import type { Metrics } from '../observability/metrics.js';

/** Every operation the partner APIs define, as openapi-typescript generated them. */
type PartnerOperations = HostappOperations & MiniappOperations;

/** An operation the platform calls at a partner: the operationIds of the host app and miniapp APIs. */
export type PartnerOperationId = keyof PartnerOperations;

/** The JSON body of a partner operation's request (never for one that has none). */
export type PartnerRequestBody<Id extends PartnerOperationId> = PartnerOperations[Id] extends {
  requestBody: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

/** The query parameters of a partner operation (E4 by GET). */
export type PartnerQuery<Id extends PartnerOperationId> = NonNullable<PartnerOperations[Id]['parameters']['query']>;

/** The header parameters of a partner operation, less the signature headers the call adds itself. */
export type PartnerHeaders<Id extends PartnerOperationId> = Omit<
  NonNullable<PartnerOperations[Id]['parameters']['header']>,
  keyof ReturnType<typeof signRequest>
>;

/** The body of a partner operation's 200 answer, as the contract defines it. */
export type PartnerAnswer<Id extends PartnerOperationId> = PartnerOperations[Id]['responses'][200]['content']['application/json'];

/** Why a partner call did not produce a contract-valid answer. */
export type PartnerFailure =
  | { kind: 'timeout'; detail: string }
  | { kind: 'unreachable'; detail: string }
  /** The registered URL leads to a non-public address (ADR 0038); nothing was sent. */
  | { kind: 'refused'; detail: string }
  | { kind: 'http_status'; detail: string; status: number }
  | { kind: 'not_json'; detail: string; status: number }
  | { kind: 'too_large'; detail: string; status: number }
  | { kind: 'invalid_body'; detail: string; status: number };

export type PartnerOutcome<Answer = unknown> =
  /** `text` is the answer exactly as the partner sent it (UTF-8); `body` is it parsed without loss. */
  { ok: true; status: number; body: Answer; text: string; durationMs: number } | { ok: false; failure: PartnerFailure; durationMs: number };

/** What the contract bounds a partner operation's answer by: `x-timeout-ms` and `x-max-answer-bytes`. */
export interface AnswerLimits {
  /** How long the whole call may take, the answer's last byte included. */
  timeoutMs: number;
  /** The most bytes the answer's body may have. */
  maxAnswerBytes: number;
}

export function answerLimits(operationId: PartnerOperationId): AnswerLimits {
  const contract = operation(operationId);
  const maxAnswerBytes = contract.extensions['x-max-answer-bytes'];
  if (contract.timeoutMs === undefined) throw new Error(`the contract gives ${operationId} no x-timeout-ms`);
  if (typeof maxAnswerBytes !== 'number') throw new Error(`the contract gives ${operationId} no x-max-answer-bytes`);
  return { timeoutMs: contract.timeoutMs, maxAnswerBytes };
}

/**
 * How an answer is read. `interpreted` (E3, E4, E6): the platform acts on its values, so it is
 * parsed without loss and a member name given twice with different values is refused.
 * `forwarded` (E7, ADR 0016): the platform passes the exact bytes on (`text`) and never acts on
 * a value, so any JSON text is accepted, duplicate member names included; `body` is then a
 * last-name-wins reading used only to check the answer's shape against the contract.
 */
export type AnswerReading = 'interpreted' | 'forwarded';

/** Where partner calls are counted: minibridge_partner_calls_total and their durations. */
export type PartnerCallMeter = Pick<Metrics, 'partnerCalls' | 'partnerCallSeconds'>;

/**
 * What a partner call needs of the running instance: where it is counted, and whether the
 * instance is the sandbox listening on loopback alone, the one place a partner's own loopback URL
 * is reached (ADR 0043). The platform's context is one.
 */
export interface PartnerCaller {
  metrics: PartnerCallMeter;
  config: { sandboxLoopback: boolean };
}

/** One call of a partner operation: where the partner registered it, how to authenticate, what to send. */
export type PartnerRequest<Id extends PartnerOperationId> = {
  /** The URL the partner registered for the operation (ADR 0012), its own query string kept. */
  url: string;
  /** How the URL may be reached: `reachOf` in partnerUrl.ts (ADR 0038, ADR 0043). */
  reach: HttpCallInit['reach'];
  authorization: string;
  /** The partner's signing secrets; with none, the request goes unsigned. */
  signingSecrets: readonly string[];
  headers: PartnerHeaders<Id>;
  /** `webhook-id` when signed: the event id on E6 and E7, so every retry of one event carries the same id. */
  messageId?: string;
  reading?: AnswerReading;
} & ([PartnerRequestBody<Id>] extends [never]
  ? { query: PartnerQuery<Id> }
  : { /** Serialised once: these exact bytes are signed and sent. */ body: JsonText<PartnerRequestBody<Id>> });

/**
 * The contract's validator of an operation's 200 answer. The validators are compiled at run time
 * from the same bundled document the types are generated from, so this is where the two meet:
 * a body the validator accepts is, by construction, the generated type.
 */
function answerValidator<Id extends PartnerOperationId>(operationId: Id): ValidateFunction<PartnerAnswer<Id>> | undefined {
  return operation(operationId).responses.get('200')?.validate as ValidateFunction<PartnerAnswer<Id>> | undefined;
}

/**
 * Calls one partner operation (httpCall, on undici's dispatcher) at the URL the partner registered, within the
 * contract's time-out for the operation (which covers the answer's last byte) and its answer cap,
 * and judges the answer against the partner API: HTTP 200, UTF-8 JSON (read without losing
 * digits), and a body that matches the operation's 200 response schema, which types it. Anything
 * else is a PartnerFailure, never passed through. Every call, whatever the operation, is counted
 * here in the meter's partner-call metrics, and only here.
 */
export async function callPartner<Id extends PartnerOperationId>(
  operationId: Id,
  request: PartnerRequest<Id>,
  meter: PartnerCallMeter,
): Promise<PartnerOutcome<PartnerAnswer<Id>>> {
  const outcome = await callOnce(operationId, request);
  meter.partnerCalls.inc({ operation: operationId, outcome: outcome.ok ? 'answered' : outcome.failure.kind });
  meter.partnerCallSeconds.observe({ operation: operationId }, outcome.durationMs / 1000);
  return outcome;
}

async function callOnce<Id extends PartnerOperationId>(
  operationId: Id,
  request: PartnerRequest<Id>,
): Promise<PartnerOutcome<PartnerAnswer<Id>>> {
  const contract = operation(operationId);
  const { timeoutMs, maxAnswerBytes } = answerLimits(operationId);
  const reading = request.reading ?? 'interpreted';
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);

  const body = 'body' in request ? (request.body as string) : undefined;
  const target = 'query' in request ? withQuery(request.url, request.query) : partnerUrl(request.url)?.target;
  if (!target) throw new TypeError(`the URL registered for ${operationId} is not a URL`);
  const headers: Record<string, string> = { authorization: request.authorization };
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = String(value);
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (request.signingSecrets.length > 0) {
    const signed = signRequest(body ?? target.search.replace(/^\?/, ''), request.signingSecrets, { messageId: request.messageId });
    Object.assign(headers, signed);
  }

  let answer: { status: number; body: Buffer };
  try {
    answer = await httpCall(target, { method: contract.method, headers, body, timeoutMs, maxAnswerBytes, reach: request.reach });
  } catch (error) {
    const failure: PartnerFailure =
      error instanceof AddressRefused
        ? { kind: 'refused', detail: error.message }
        : error instanceof AnswerTooLargeError
          ? { kind: 'too_large', status: error.status, detail: `${error.message} (the API allows ${error.limit})` }
          : isTimeout(error)
            ? { kind: 'timeout', detail: `no complete answer within ${timeoutMs / 1000} s` }
            : { kind: 'unreachable', detail: describeNetworkError(error) };
    return { ok: false, failure, durationMs: elapsed() };
  }
  const { status } = answer;
  if (status !== 200) {
    return { ok: false, failure: { kind: 'http_status', status, detail: `answered HTTP ${status} instead of 200` }, durationMs: elapsed() };
  }
  const breaksApi = (why: string): PartnerOutcome<never> => ({
    ok: false,
    failure: { kind: 'invalid_body', status, detail: `answered with a body that breaks the API: ${why}` },
    durationMs: elapsed(),
  });
  const notJson = (why: string): PartnerOutcome<never> => ({
    ok: false,
    failure: { kind: 'not_json', status, detail: `answered with a body that is not UTF-8 JSON${quotable(why)}` },
    durationMs: elapsed(),
  });
  let text: string;
  try {
    text = utf8.decode(answer.body);
  } catch (error) {
    return notJson(`: ${(error as Error).message}`);
  }
  // Before anything recursive reads it: a deeper answer would exhaust the stack of the parser,
  // the validator or the store (the Platform API's x-max-json-depth, ADR 0015). The same one
  // scan gives the lossless read the numbers' source text, so the text is scanned once.
  const scan = scanJson(text, { depthLimit: maxJsonDepth() });
  if (scan.tooDeep) return breaksApi(`objects and arrays are nested more than ${maxJsonDepth()} deep`);
  let parsed: unknown;
  try {
    parsed = reading === 'forwarded' ? JSON.parse(text) : readLossless(text, scan).value;
  } catch (error) {
    return notJson(error instanceof Error ? `: ${error.message}` : '');
  }
  // A value the platform acts on or stores must be text the store keeps as sent (a forwarded
  // answer travels as its bytes, where a \u escape is only text).
  const unstorable = reading === 'interpreted' && mayHoldUnstorableText(text) ? unstorableText(parsed) : undefined;
  if (unstorable) return breaksApi(unstorable);
  const validate = answerValidator(operationId);
  if (!validate) throw new Error(`the contract gives ${operationId} no 200 answer schema`);
  if (!conforms(validate, parsed)) return breaksApi(explain(validate.errors ?? []));
  return { ok: true, status, body: parsed, text, durationMs: elapsed() };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A parser's message with the characters it quotes from the answer written as `\uXXXX` where
 * they are control characters or half a surrogate pair. The message quotes the partner's bytes as
 * they came, and a failure's detail is stored (an E6 attempt's error, ADR 0008): PostgreSQL
 * refuses a NUL in text, so an answer of one NUL byte failed every record of its attempt, and the
 * delivery was retried at each lease's end past its horizon, never recorded, never dead.
 */
function quotable(message: string): string {
  return message.replace(
    // eslint-disable-next-line no-control-regex -- the control characters are what is replaced
    /[\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A registered URL with the query's parameters appended (E4 by GET). */
function withQuery(url: string, query: Record<string, unknown>): URL {
  const target = new URL(url);
  for (const [name, value] of Object.entries(query)) target.searchParams.append(name, String(value));
  return target;
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: string })?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
}
