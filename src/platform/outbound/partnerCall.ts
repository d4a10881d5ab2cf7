import { check, operation } from '../../contract/operations.js';
import { mayHoldUnstorableText, maxJsonDepth, nestsDeeperThan, parseLossless, unstorableText } from '../../contract/json.js';
import { AnswerTooLargeError } from './httpFetch.js';

/** Why a partner call did not produce a contract-valid answer. */
export type PartnerFailure =
  | { kind: 'timeout'; detail: string }
  | { kind: 'unreachable'; detail: string }
  | { kind: 'http_status'; detail: string; status: number }
  | { kind: 'not_json'; detail: string; status: number }
  | { kind: 'too_large'; detail: string; status: number }
  | { kind: 'invalid_body'; detail: string; status: number };

export type PartnerOutcome =
  /** `text` is the answer exactly as the partner sent it (UTF-8); `body` is it parsed without loss. */
  | { ok: true; status: number; body: unknown; text: string; durationMs: number }
  | { ok: false; failure: PartnerFailure; durationMs: number };

export type PartnerOperationId =
  | 'createHostappOrderPayment'
  | 'getHostappPaymentStatus'
  | 'queryHostappPaymentStatus'
  | 'receiveHostappEvent'
  | 'receiveOrderCompletion'
  | 'receiveMiniappEvent';

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

/** A partner operation's answer as openapi-fetch gives it with `parseAs: 'arrayBuffer'`. */
export interface RawAnswer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/**
 * Runs one call through a generated client within the contract's time-out for the operation
 * (which covers the answer's last byte; the fetch cuts the answer at the contract's size cap) and
 * judges the answer against the partner API: HTTP 200, UTF-8 JSON (read without losing digits),
 * and a body that matches the operation's 200 response schema. Anything else is a
 * PartnerFailure, never passed through.
 */
export async function callPartner(
  operationId: PartnerOperationId,
  send: (signal: AbortSignal) => Promise<RawAnswer>,
  reading: AnswerReading = 'interpreted',
): Promise<PartnerOutcome> {
  const contract = operation(operationId);
  const { timeoutMs } = answerLimits(operationId);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let answer: RawAnswer;
  try {
    answer = await send(AbortSignal.timeout(timeoutMs));
  } catch (error) {
    const failure: PartnerFailure =
      error instanceof AnswerTooLargeError
        ? { kind: 'too_large', status: error.status, detail: `${error.message} (the API allows ${error.limit})` }
        : isTimeout(error)
          ? { kind: 'timeout', detail: `no complete answer within ${timeoutMs / 1000} s` }
          : { kind: 'unreachable', detail: describeNetworkError(error) };
    return { ok: false, failure, durationMs: elapsed() };
  }
  const { response } = answer;
  // Judged before the body is read: openapi-fetch has already consumed (and JSON-parsed) the body
  // of a non-2xx answer, so reading it again would fail and misreport the answer as a broken connection.
  if (response.status !== 200) {
    return {
      ok: false,
      failure: { kind: 'http_status', status: response.status, detail: `answered HTTP ${response.status} instead of 200` },
      durationMs: elapsed(),
    };
  }
  // httpFetch hands over a complete, capped answer, so reading it here cannot wait or grow.
  const bytes = answer.data instanceof ArrayBuffer ? answer.data : await response.arrayBuffer();
  let text: string;
  let body: unknown;
  const breaksApi = (why: string): PartnerOutcome => ({
    ok: false,
    failure: { kind: 'invalid_body', status: response.status, detail: `answered with a body that breaks the API: ${why}` },
    durationMs: elapsed(),
  });
  try {
    text = utf8.decode(bytes);
  } catch (error) {
    return {
      ok: false,
      failure: {
        kind: 'not_json',
        status: response.status,
        detail: `answered with a body that is not UTF-8 JSON: ${(error as Error).message}`,
      },
      durationMs: elapsed(),
    };
  }
  // Before anything recursive reads it: a deeper answer would exhaust the stack of the parser,
  // the validator or the store (the Platform API's x-max-json-depth, ADR 0015).
  if (nestsDeeperThan(text)) return breaksApi(`objects and arrays are nested more than ${maxJsonDepth()} deep`);
  try {
    body = reading === 'forwarded' ? JSON.parse(text) : parseLossless(text);
  } catch (error) {
    const why = error instanceof Error ? `: ${error.message}` : '';
    return {
      ok: false,
      failure: { kind: 'not_json', status: response.status, detail: `answered with a body that is not UTF-8 JSON${why}` },
      durationMs: elapsed(),
    };
  }
  // A value the platform acts on or stores must be text the store keeps as sent (a forwarded
  // answer travels as its bytes, where a \u escape is only text).
  const unstorable = reading === 'interpreted' && mayHoldUnstorableText(text) ? unstorableText(body) : undefined;
  if (unstorable) return breaksApi(unstorable);
  const validate = contract.responses.get('200')?.validate;
  if (validate) {
    const result = check(validate, body);
    if (!result.valid) {
      return {
        ok: false,
        failure: { kind: 'invalid_body', status: response.status, detail: `answered with a body that breaks the API: ${result.message}` },
        durationMs: elapsed(),
      };
    }
  }
  return { ok: true, status: response.status, body, text, durationMs: elapsed() };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: string })?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
}
