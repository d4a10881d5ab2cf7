import { isLosslessNumber, stringifyLossless } from '../../contract/json.js';
import { check as validate, type OperationContract } from '../../contract/operations.js';
import type { Exchange } from './exchange.js';
import type { Rules } from './targets.js';

/** The checks, in report order. */
export const CHECKS = [
  'status',
  'content-type',
  'schema',
  'positive',
  'negative',
  'auth',
  'stale-timestamp',
  'replay',
  'idempotency',
  'expiry',
] as const;
export type CheckName = (typeof CHECKS)[number];

export const CHECK_DESCRIPTIONS: Record<CheckName, string> = {
  status: 'no 5xx; partner APIs answer HTTP 200 in all cases, the platform only documented statuses',
  'content-type': 'the answer carries the documented media type (application/json)',
  schema: 'the body matches the response schema of its status (required fields unless error_code)',
  positive: 'documented examples and boundary values (String(n) at n, 20-digit decimals as string and number) are accepted',
  negative: 'a missing required field, a wrong type and each limit + 1 are refused with an error_code',
  auth: 'a missing or wrong Authorization, or a wrong Standard Webhooks signature (webhook-signature), is refused, never served as a success',
  'stale-timestamp':
    'with request signing: a request signed correctly but timestamped outside the replay window (x-replay-window-seconds) is refused',
  replay: 'with request signing: a signed request accepted once and sent again byte for byte (the same signature) is refused',
  idempotency:
    'the same event delivered twice (same X-Minibridge-Event-Id) gets the same successful answer; E3 gives the same miniapp_order_id the same order_payment_id, and another one another',
  expiry:
    'E4 about a payment past its E3 expires_at, never paid, reports it closed (cancelled or failed): no payment is taken after expiry, and one left in_process would be stuck',
};

/** A verdict on one exchange: undefined when it passes, else why it fails. */
export type Verdict = string | undefined;

export function statusVerdict(exchange: Exchange, contract: OperationContract, rules: Rules): Verdict {
  if (exchange.status === 0) return exchange.error ?? 'no answer';
  if (exchange.status >= 500) return `answered HTTP ${exchange.status} (a server error)`;
  if (rules === 'partner' && exchange.status !== 200) return `answered HTTP ${exchange.status}; partner APIs answer HTTP 200 in all cases`;
  if (!contract.responses.has(String(exchange.status))) {
    return `answered HTTP ${exchange.status}, not a documented status (${[...contract.responses.keys()].join(', ')})`;
  }
  return undefined;
}

export function contentTypeVerdict(exchange: Exchange, contract: OperationContract): Verdict {
  if (exchange.status === 0) return undefined;
  const documented =
    contract.responses.get(String(exchange.status))?.contentType ??
    [...contract.responses.values()].find((response) => response.contentType)?.contentType;
  if (!documented) return undefined;
  const actual = exchange.contentType?.split(';')[0]?.trim().toLowerCase();
  return actual === documented.toLowerCase()
    ? undefined
    : `Content-Type is ${exchange.contentType ?? 'missing'}, the contract documents ${documented}`;
}

/** Not applicable (undefined verdict) when the status is undocumented: the status check reports that. */
export function schemaVerdict(exchange: Exchange, contract: OperationContract): Verdict {
  if (exchange.status === 0) return undefined;
  const response = contract.responses.get(String(exchange.status));
  if (!response?.contentType) return undefined;
  if (exchange.json === undefined) return 'the body is not JSON';
  if (!response.validate) return undefined;
  const result = validate(response.validate, exchange.json);
  return result.valid ? undefined : `the body breaks the ${exchange.status} response schema: ${result.message}`;
}

/** An accepted request: partners answer without error_code (status is judged apart), the platform with 2xx. */
export function acceptedVerdict(exchange: Exchange, rules: Rules): Verdict {
  if (exchange.status === 0) return exchange.error ?? 'no answer';
  if (rules === 'platform') {
    return exchange.status >= 200 && exchange.status < 300 ? undefined : `refused with HTTP ${exchange.status}${errorCodeNote(exchange)}`;
  }
  if (!isObject(exchange.json)) return 'the answer is not a JSON object';
  const code = errorCode(exchange);
  return code === undefined ? undefined : `refused with error_code ${code}`;
}

/** A refused request: an error_code, and for the platform a 4xx status as documented. */
export function refusedVerdict(exchange: Exchange, rules: Rules): Verdict {
  if (exchange.status === 0) return exchange.error ?? 'no answer';
  if (rules === 'platform' && (exchange.status < 400 || exchange.status >= 500)) {
    return `answered HTTP ${exchange.status}${errorCodeNote(exchange)}; a refusal is a documented 4xx`;
  }
  return errorCode(exchange) === undefined ? `accepted (HTTP ${exchange.status} without error_code)` : undefined;
}

/** The second delivery of the same event must get the first delivery's successful answer. */
export function duplicateVerdict(first: Exchange, second: Exchange, rules: Rules): Verdict {
  const firstRefused = acceptedVerdict(first, rules);
  if (firstRefused) return `first delivery ${firstRefused}`;
  const secondRefused = acceptedVerdict(second, rules);
  if (secondRefused) return `second delivery of the same event ${secondRefused}`;
  if (second.status !== first.status) return `the second delivery answered HTTP ${second.status}, the first ${first.status}`;
  return canonical(first.json) === canonical(second.json) ? undefined : 'the second delivery got a different answer than the first';
}

/**
 * E3 is idempotent on `order.miniapp_order_id`: the same order sent again (a retried E1) gets the
 * first answer's order_payment_id, an order with another miniapp_order_id a new one. null when
 * there is nothing to compare.
 */
export function orderIdempotencyVerdict(first: Exchange, repeat: Exchange, other: Exchange, rules: Rules): Verdict | null {
  const refused = (
    [
      ['first order', first],
      ['the same order again', repeat],
      ['an order with another miniapp_order_id', other],
    ] as const
  )
    .map(([label, exchange]) => [label, acceptedVerdict(exchange, rules)] as const)
    .find(([, verdict]) => verdict);
  if (refused) return `${refused[0]}: ${refused[1]}`;
  const [firstId, repeatId, otherId] = [first, repeat, other].map(orderPaymentId);
  // Accepted without an order_payment_id: nothing to compare (the schema check reports the answer).
  if (firstId === undefined || repeatId === undefined || otherId === undefined) return null;
  if (repeatId !== firstId) {
    return `the same miniapp_order_id got order_payment_id ${firstId}, then ${repeatId}: E3 must be idempotent on order.miniapp_order_id (a retried E1 would otherwise create a second payment)`;
  }
  if (otherId === firstId) return `an order with another miniapp_order_id got the same order_payment_id ${firstId}`;
  return undefined;
}

/**
 * E4 about a payment whose `expires_at` (sent on E3) has passed and that nobody paid: the host
 * app took no payment after expiry, so it reports the payment closed, `cancelled` or `failed`
 * (ADR 0039). `in_process` would leave it stuck at the platform; `paid` was taken after expiry.
 */
export function expiryVerdict(exchange: Exchange, rules: Rules): Verdict {
  const refused = acceptedVerdict(exchange, rules);
  if (refused) return `the status query about an expired payment was ${refused}`;
  const status = isObject(exchange.json) ? (exchange.json as Record<string, unknown>).payment_status : undefined;
  if (status === 'cancelled' || status === 'failed') return undefined;
  if (status === 'in_process')
    return 'still in_process after its expires_at: close expired payments and report them cancelled (the platform would list it as stuck)';
  return `reported ${String(status)} for a payment nobody paid before its expires_at`;
}

function orderPaymentId(exchange: Exchange): string | undefined {
  const id = isObject(exchange.json) ? (exchange.json as Record<string, unknown>).order_payment_id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** Whether an exchange carried an answer a response check can judge (a status the contract documents with a body). */
export function hasJudgeableAnswer(exchange: Exchange, contract: OperationContract): boolean {
  return exchange.status !== 0 && contract.responses.get(String(exchange.status))?.contentType !== undefined;
}

export function errorCodeOf(exchange: Exchange): string | undefined {
  return errorCode(exchange);
}

function errorCode(exchange: Exchange): string | undefined {
  const code = isObject(exchange.json) ? (exchange.json as Record<string, unknown>).error_code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function errorCodeNote(exchange: Exchange): string {
  const code = errorCode(exchange);
  return code ? ` (${code})` : '';
}

function isObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !isLosslessNumber(value);
}

/** JSON text with sorted keys, so two answers compare by content. */
function canonical(value: unknown): string {
  const sort = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(sort);
    if (!isObject(node)) return node;
    return Object.fromEntries(
      Object.entries(node as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, item]) => [key, sort(item)]),
    );
  };
  return value === undefined ? '' : stringifyLossless(sort(value));
}
