import { check, operation } from '../contract/operations.js';
import { parseLossless } from '../contract/json.js';

/** Why a partner call did not produce a contract-valid answer. */
export type PartnerFailure =
  | { kind: 'timeout'; detail: string }
  | { kind: 'unreachable'; detail: string }
  | { kind: 'http_status'; detail: string; status: number }
  | { kind: 'not_json'; detail: string; status: number }
  | { kind: 'invalid_body'; detail: string; status: number };

export type PartnerOutcome =
  | { ok: true; status: number; body: unknown; durationMs: number }
  | { ok: false; failure: PartnerFailure; durationMs: number };

export type PartnerOperationId =
  | 'createHostappOrderPayment'
  | 'getHostappPaymentStatus'
  | 'queryHostappPaymentStatus'
  | 'receiveHostappEvent'
  | 'receiveOrderCompletion'
  | 'receiveMiniappEvent';

/** A partner operation's answer as openapi-fetch gives it with `parseAs: 'text'`. */
export interface RawAnswer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/**
 * Runs one call through a generated client with the contract's time-out for the operation and
 * judges the answer against the partner API: HTTP 200, JSON (read without losing digits), and a
 * body that matches the operation's 200 response schema. Anything else is a PartnerFailure,
 * never passed through.
 */
export async function callPartner(
  operationId: PartnerOperationId,
  send: (signal: AbortSignal) => Promise<RawAnswer>,
): Promise<PartnerOutcome> {
  const contract = operation(operationId);
  const timeoutMs = contract.timeoutMs;
  if (timeoutMs === undefined) throw new Error(`the contract gives ${operationId} no x-timeout-ms`);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let answer: RawAnswer;
  try {
    answer = await send(AbortSignal.timeout(timeoutMs));
  } catch (error) {
    const failure: PartnerFailure = isTimeout(error)
      ? { kind: 'timeout', detail: `no answer within ${timeoutMs / 1000} s` }
      : { kind: 'unreachable', detail: describeNetworkError(error) };
    return { ok: false, failure, durationMs: elapsed() };
  }
  const { response } = answer;
  // Judged before the body is read: openapi-fetch has already consumed (and JSON-parsed) the body
  // of a non-2xx answer, so reading it again would fail and misreport the answer as a broken connection.
  if (response.status !== 200) {
    return { ok: false, failure: { kind: 'http_status', status: response.status, detail: `answered HTTP ${response.status} instead of 200` }, durationMs: elapsed() };
  }
  let text: string;
  try {
    text = typeof answer.data === 'string' ? answer.data : typeof answer.error === 'string' ? answer.error : await response.text();
  } catch (error) {
    const failure: PartnerFailure = isTimeout(error)
      ? { kind: 'timeout', detail: `the answer did not complete within ${timeoutMs / 1000} s` }
      : { kind: 'unreachable', detail: `the connection broke during the answer: ${describeNetworkError(error)}` };
    return { ok: false, failure, durationMs: elapsed() };
  }
  let body: unknown;
  try {
    body = parseLossless(text);
  } catch {
    return { ok: false, failure: { kind: 'not_json', status: response.status, detail: 'answered with a body that is not JSON' }, durationMs: elapsed() };
  }
  const validate = contract.responses.get('200')?.validate;
  if (validate) {
    const result = check(validate, body);
    if (!result.valid) {
      return { ok: false, failure: { kind: 'invalid_body', status: response.status, detail: `answered with a body that breaks the API: ${result.message}` }, durationMs: elapsed() };
    }
  }
  return { ok: true, status: response.status, body, durationMs: elapsed() };
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: string })?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
}
