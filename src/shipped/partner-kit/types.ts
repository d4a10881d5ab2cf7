import type { IncomingHttpHeaders } from 'node:http';
import type { LosslessNumber } from 'lossless-json';
import type { components as HostappComponents, operations as HostappOperations } from '../../../generated/types/hostapp.js';
import type { operations as MiniappOperations } from '../../../generated/types/miniapp.js';

/**
 * A generated contract type as the helpers hand it over: bodies are parsed without loss, so
 * every JSON number arrives as a LosslessNumber holding its exact digits (`decimalText(value)`
 * gives them; `Number(value)` is safe only for small integers such as a quantity).
 */
export type Lossless<T> = T extends number
  ? LosslessNumber
  : T extends readonly (infer Item)[]
    ? Lossless<Item>[]
    : T extends object
      ? { [Key in keyof T]: Lossless<T[Key]> }
      : T;

type JsonRequestBody<Operation> = Operation extends { requestBody: { content: { 'application/json': infer Body } } } ? Body : never;
type JsonAnswer<Operation> = Operation extends { responses: { 200: { content: { 'application/json': infer Answer } } } } ? Answer : never;

/**
 * Every partner operation reports errors as `error_code` in an HTTP 200 body (the partner APIs'
 * rule), e.g. `{ error_code: 'ORDER_NOT_FOUND' }`.
 */
export type PartnerErrorAnswer = { error_code: HostappComponents['schemas']['PartnerErrorCode'] };

/** What a handler may answer: the operation's 200 body or an error, directly or as a promise. */
type Answer<T> = T | PartnerErrorAnswer | Promise<T | PartnerErrorAnswer>;

/** The request as the helpers saw it, for every operation. */
export interface RequestContext {
  operationId: string;
  /** The host app user the payment is for (`X-User-ID`, percent-decoded: `order.hostapp_user_id` exactly), when the order names one. */
  userId: string | undefined;
  /** The user access token that authorized the call, when `acceptUserAccessToken` accepted it. */
  userAccessToken: string | undefined;
  /** The platform's id of this event or callback (`X-Minibridge-Event-Id`), stable across deliveries. */
  eventId: string | undefined;
  /** Which delivery attempt this is (`X-Minibridge-Delivery-Attempt`, E6), from 1. */
  deliveryAttempt: number | undefined;
  /** Every request header, names in lower case. */
  headers: IncomingHttpHeaders;
  /** The exact bytes received (the raw query string for a GET). */
  rawBody: string;
}

/** E6 and E7 always carry an event id (the contract requires the header). */
export interface DeliveryContext extends RequestContext {
  eventId: string;
}

/** Types of the host app server API (generated/types/hostapp.ts), as the helpers pass them. */
export type HostappCreateOrderPaymentBody = Lossless<JsonRequestBody<HostappOperations['createHostappOrderPayment']>>;
export type HostappCreateOrderPaymentAnswer = JsonAnswer<HostappOperations['createHostappOrderPayment']>;
/** The POST body and the GET query parameters of E4 are the same fields. */
export type HostappPaymentStatusQuery = JsonRequestBody<HostappOperations['getHostappPaymentStatus']> &
  HostappOperations['queryHostappPaymentStatus']['parameters']['query'];
export type HostappPaymentStatusAnswer = JsonAnswer<HostappOperations['getHostappPaymentStatus']> &
  JsonAnswer<HostappOperations['queryHostappPaymentStatus']>;
export type HostappEvent = Lossless<JsonRequestBody<HostappOperations['receiveHostappEvent']>>;
export type HostappEventAnswer = JsonAnswer<HostappOperations['receiveHostappEvent']>;

/** Types of the miniapp server API (generated/types/miniapp.ts), as the helpers pass them. */
export type OrderCompletionBody = Lossless<JsonRequestBody<MiniappOperations['receiveOrderCompletion']>>;
export type OrderCompletionAnswer = JsonAnswer<MiniappOperations['receiveOrderCompletion']>;
export type MiniappEvent = Lossless<JsonRequestBody<MiniappOperations['receiveMiniappEvent']>>;
export type MiniappEventAnswer = JsonAnswer<MiniappOperations['receiveMiniappEvent']>;

export interface HostappHandlers {
  /** E3: create the payment and answer its `order_payment_id`, or an `error_code`. */
  createOrderPayment(body: HostappCreateOrderPaymentBody, ctx: RequestContext): Answer<HostappCreateOrderPaymentAnswer>;
  /** E4 (POST body or GET query): the payment status report, or an `error_code` (e.g. ORDER_NOT_FOUND). */
  getPaymentStatus(query: HostappPaymentStatusQuery, ctx: RequestContext): Answer<HostappPaymentStatusAnswer>;
  /** E7: an event from a miniapp; the answer goes back to the miniapp as it is. */
  receiveEvent(event: HostappEvent, ctx: DeliveryContext): Answer<HostappEventAnswer>;
}

export interface MiniappHandlers {
  /** E6: record the outcome and answer `{code}` (retried until you do), or an `error_code`. */
  receiveOrderCompletion(body: OrderCompletionBody, ctx: DeliveryContext): Answer<OrderCompletionAnswer>;
  /** E7: an event from a host app; the answer goes back to the host app as it is. */
  receiveEvent(event: MiniappEvent, ctx: DeliveryContext): Answer<MiniappEventAnswer>;
}

/** Where the helpers report what they refused or what failed; a pino logger fits. */
export interface PartnerKitLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * Remembers the first successful answer per event id. `get` and `set` may be asynchronous, so a
 * shared store (Redis, a database table) can replace the in-memory one across instances.
 */
export interface AnswerStore {
  get(key: string): string | undefined | Promise<string | undefined>;
  set(key: string, answer: string): void | Promise<void>;
}

export interface CommonRouterOptions {
  /**
   * Your active request-signing secrets (up to two while rotating), as registered in the
   * dashboard. When given, every request must carry a valid `X-Minibridge-Signature` over the
   * raw body (the raw query string for a GET), a timestamp within `x-replay-window-seconds` (replayWindowSeconds()), and a signature not
   * seen before within that window.
   */
  signingSecrets?: readonly string[] | undefined;
  /**
   * Idempotency on `X-Minibridge-Event-Id` for the event and callback operations (E6, E7).
   * `'memory'` (the default) remembers the first successful answer per event id (the 10,000 most
   * recent) and sends it again for a repeat without calling your handler; answers carrying an
   * `error_code` are not remembered, so a retry runs the handler again. `'off'` calls the handler
   * for every delivery; an AnswerStore shares the memory between instances.
   */
  idempotency?: 'memory' | 'off' | AnswerStore | undefined;
  logger?: PartnerKitLogger | undefined;
}

export interface HostappRouterOptions extends CommonRouterOptions {
  /** hostapp_client_id, as registered in the dashboard. */
  clientId: string;
  /** hostapp_secret_key. */
  secretKey: string;
  /** The `<prefix>` of `Authorization: <prefix> base64(client_id:secret_key)`; `Token` unless you changed it. */
  tokenPrefix?: string | undefined;
  /**
   * For host apps that enabled the access-token option: decides whether `<prefix> <token>` on
   * E3/E4 is a valid user access token from your access-token service. Without it only your
   * client credentials are accepted.
   */
  acceptUserAccessToken?: ((token: string) => boolean | Promise<boolean>) | undefined;
  /** Where to mount each operation, when you registered other URLs than the contract's suggested paths. */
  paths?: { createOrderPayment?: string | undefined; getPaymentStatus?: string | undefined; events?: string | undefined } | undefined;
  handlers: HostappHandlers;
}

export interface MiniappRouterOptions extends CommonRouterOptions {
  /** The miniapp's app_id, as registered in the dashboard. */
  appId: string;
  /** The miniapp's secret_key. */
  secretKey: string;
  paths?: { completeOrder?: string | undefined; events?: string | undefined } | undefined;
  handlers: MiniappHandlers;
}
