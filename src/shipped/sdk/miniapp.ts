import { decimalViolation } from '../../contract/decimal.js';
import { AMOUNT_RULE, BRIDGE_ERROR_CODES, CUSTOM_EVENT_NAME } from '../../../generated/sdk/bridge-contract.js';
import { detectEndpoint, type BridgeEndpoint, type WindowLike } from './endpoints.js';
import { MinibridgeSdkError, type SdkErrorCode } from './errors.js';
import {
  envelope,
  HOST_MESSAGE_DEFINITIONS,
  isBridgeTraffic,
  isHostMessageType,
  withoutUndefined,
  type BridgeError,
  type CustomEventData,
  type CustomEventRequest,
  type CustomEventResult,
  type HostEvent,
  type HostEventDetail,
  type PaymentData,
  type PaymentResultStatus,
  type PayRequest,
  type PayResult,
} from './messages.js';
import { describeViolations, validateMessage, type SchemaViolation, type ValidatedDefinition } from './validation.js';

/** The custom event name of the spec (`<Platform>WebAppCustomEvent`), from the bridge schema. */
export const MinibridgeWebAppCustomEvent = CUSTOM_EVENT_NAME;

/** sendPromise's default time-out: after it the promise rejects with TIMEOUT. */
export const DEFAULT_SEND_TIMEOUT_MS = 30_000;

export interface MinibridgeSdkOptions {
  /** Where messages go; by default the native web view's handler or the parent frame, detected from `window`. */
  endpoint?: BridgeEndpoint | undefined;
  /** The window to detect the endpoint from; default `globalThis.window`. */
  window?: WindowLike | undefined;
  /** In an iframe: the host page's origin. Messages go only there and only its messages are read. Default `*`. */
  hostOrigin?: string | undefined;
  /** Default time-out of sendPromise in milliseconds (default 30 000). */
  timeoutMs?: number | undefined;
  /** Time-out of pay in milliseconds; 0 (the default) waits as long as the user keeps the payment sheet open. */
  payTimeoutMs?: number | undefined;
  /** Called with bridge messages that break the schema and answer nothing pending; they are dropped. */
  onInvalidMessage?: ((data: unknown, reason: string) => void) | undefined;
}

/** What pay(...) resolves with: the user-facing result the host app reported. */
export interface PayOutcome {
  status: PaymentResultStatus;
}

/** What subscribe callbacks receive; `detail` is the spec's `event.detail`. */
export interface MinibridgeEvent {
  detail: HostEventDetail;
}

export type MinibridgeEventCallback = (event: MinibridgeEvent) => void;

export interface SendPromiseOptions {
  /** Overrides the SDK's time-out for this call. */
  timeoutMs?: number | undefined;
}

export interface MinibridgeSdk {
  /** E9: asks the host app to show its payment sheet for an order payment created with E1. */
  pay(paymentData: PaymentData): Promise<PayOutcome>;
  /** Sends a custom event to the host app; nothing comes back. */
  send(eventName: typeof MinibridgeWebAppCustomEvent, data: CustomEventData): void;
  /** Sends a custom event and waits for the host app: resolves with its result, rejects on failure or time-out. */
  sendPromise(eventName: typeof MinibridgeWebAppCustomEvent, data: CustomEventData, options?: SendPromiseOptions): Promise<unknown>;
  /** Calls callback with every event the host app sends; returns a function that unsubscribes. */
  subscribe(callback: MinibridgeEventCallback): () => void;
  /** Stops listening; pending calls reject with CLOSED. */
  close(): void;
}

interface Pending {
  answers: 'pay_result' | 'custom_event_result';
  orderPaymentId?: string;
  resolve(value: unknown): void;
  reject(error: MinibridgeSdkError): void;
  timer?: ReturnType<typeof setTimeout>;
}

const PAYMENT_FIELD_CODES: Record<keyof PaymentData, SdkErrorCode> = {
  amount: 'INVALID_AMOUNT',
  currency: 'INVALID_CURRENCY',
  miniappOrderId: 'INVALID_MINIAPP_ORDER_ID',
  orderPaymentId: 'INVALID_ORDER_PAYMENT_ID',
  extraParams: 'INVALID_EXTRA_PARAMS',
};

export function createMinibridgeSdk(options: MinibridgeSdkOptions = {}): MinibridgeSdk {
  const win = options.window ?? (globalThis as { window?: WindowLike }).window;
  const endpoint = options.endpoint ?? detectEndpoint(win, options.hostOrigin);
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  const pending = new Map<string, Pending>();
  const subscribers = new Set<MinibridgeEventCallback>();
  const stopListening = endpoint?.listen(receive);
  let closed = false;

  function requireEndpoint(): BridgeEndpoint {
    if (closed) throw new MinibridgeSdkError('CLOSED', 'this Minibridge SDK instance was closed');
    if (!endpoint)
      throw new MinibridgeSdkError('NO_HOST', 'not running inside a Minibridge host app (no parent frame and no native message handler)');
    return endpoint;
  }

  function request<T>(
    message: PayRequest | CustomEventRequest,
    entry: Omit<Pending, 'resolve' | 'reject' | 'timer'>,
    timeoutMs: number,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const record: Pending = { ...entry, resolve: resolve as (value: unknown) => void, reject };
      if (timeoutMs > 0) {
        record.timer = setTimeout(() => {
          pending.delete(message.id);
          reject(new MinibridgeSdkError('TIMEOUT', `the host app did not answer ${message.type} within ${timeoutMs} ms`));
        }, timeoutMs);
      }
      pending.set(message.id, record);
      try {
        requireEndpoint().post(message);
      } catch (error) {
        settle(message.id);
        reject(error);
      }
    });
  }

  /** Removes and returns the pending request a reply answers. */
  function settle(id: unknown): Pending | undefined {
    if (typeof id !== 'string') return undefined;
    const record = pending.get(id);
    if (!record) return undefined;
    pending.delete(id);
    if (record.timer !== undefined) clearTimeout(record.timer);
    return record;
  }

  function receive(data: unknown): void {
    if (!isBridgeTraffic(data)) return;
    const envelopeCheck = validateMessage('Envelope', data);
    const definition: ValidatedDefinition | undefined = !envelopeCheck.ok
      ? 'Envelope'
      : isHostMessageType(data.type)
        ? HOST_MESSAGE_DEFINITIONS[data.type]
        : undefined;
    if (definition === undefined) return; // a message type of a later protocol version: ignored
    const check = definition === 'Envelope' ? envelopeCheck : validateMessage(definition, data);
    if (!check.ok) {
      refuse(data, check.violations);
      return;
    }
    // The message passed its definition's generated validator just above; the validator is not a type guard.
    const message = data as unknown as PayResult | CustomEventResult | BridgeError | HostEvent;
    if (message.type === 'host_event') {
      deliver(message.detail);
      return;
    }
    const record = settle(message.replyTo);
    if (!record) return; // an answer after its time-out, or to another SDK instance
    if (message.type === 'error') {
      record.reject(
        new MinibridgeSdkError(
          'HOST_ERROR',
          `the host app refused the request: ${message.error.code}: ${message.error.message}`,
          message.error.code,
        ),
      );
    } else if (message.type !== record.answers) {
      record.reject(
        new MinibridgeSdkError('INVALID_MESSAGE', `the host app answered with ${message.type} where ${record.answers} was expected`),
      );
    } else if (message.type === 'pay_result') {
      if (message.paymentData.orderPaymentId !== record.orderPaymentId) {
        record.reject(
          new MinibridgeSdkError(
            'INVALID_MESSAGE',
            `the host app answered for order payment ${message.paymentData.orderPaymentId}, not ${record.orderPaymentId}`,
          ),
        );
      } else {
        record.resolve({ status: message.paymentData.status } satisfies PayOutcome);
      }
    } else if (message.ok) {
      record.resolve(message.result);
    } else {
      const error = message.error ?? { code: BRIDGE_ERROR_CODES.REJECTED, message: 'no reason given' };
      record.reject(
        new MinibridgeSdkError('HOST_REJECTED', `the host app rejected the event: ${error.code}: ${error.message}`, error.code),
      );
    }
  }

  /** A message that breaks the schema: it fails the request it answers, if any, else it is dropped. */
  function refuse(data: Record<string, unknown>, violations: SchemaViolation[]): void {
    const reason = describeViolations(violations);
    const record = settle(data.replyTo);
    if (record) record.reject(new MinibridgeSdkError('INVALID_MESSAGE', `the host app's answer breaks the bridge schema: ${reason}`));
    else options.onInvalidMessage?.(data, reason);
  }

  function deliver(detail: HostEventDetail): void {
    for (const callback of [...subscribers]) {
      try {
        callback({ detail });
      } catch (error) {
        // One failing subscriber must not starve the others; the error still reaches the console.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  function customEventMessage(eventName: unknown, data: CustomEventData, expectsReply: boolean): CustomEventRequest {
    const message = {
      ...envelope('custom_event'),
      eventName,
      data: isPlainObject(data) ? withoutUndefined(data) : data,
      expectsReply,
    } as CustomEventRequest;
    const check = validateMessage('CustomEventRequest', message);
    if (!check.ok) {
      const onName = check.violations.some(
        (violation) => violation.instancePath.startsWith('/eventName') || violation.params.missingProperty === 'eventName',
      );
      if (onName)
        throw new MinibridgeSdkError(
          'UNKNOWN_EVENT_NAME',
          `unknown event name ${JSON.stringify(eventName)}: the only one is ${MinibridgeWebAppCustomEvent}`,
        );
      throw new MinibridgeSdkError(
        'INVALID_EVENT_DATA',
        `event data must be an object with a string type and an optional payload: ${describeViolations(check.violations)}`,
      );
    }
    return message;
  }

  return {
    async pay(paymentData) {
      const message = {
        ...envelope('pay'),
        paymentData: isPlainObject(paymentData) ? withoutUndefined(paymentData) : paymentData,
      } as PayRequest;
      const check = validateMessage('PayRequest', message);
      if (!check.ok) throw paymentDataError(message.paymentData, check.violations);
      return request<PayOutcome>(
        message,
        { answers: 'pay_result', orderPaymentId: message.paymentData.orderPaymentId },
        options.payTimeoutMs ?? 0,
      );
    },
    send(eventName, data) {
      const message = customEventMessage(eventName, data, false);
      requireEndpoint().post(message);
    },
    async sendPromise(eventName, data, callOptions = {}) {
      const message = customEventMessage(eventName, data, true);
      return request<unknown>(message, { answers: 'custom_event_result' }, callOptions.timeoutMs ?? defaultTimeoutMs);
    },
    subscribe(callback) {
      subscribers.add(callback);
      return () => subscribers.delete(callback);
    },
    close() {
      if (closed) return;
      closed = true;
      stopListening?.();
      subscribers.clear();
      for (const id of [...pending.keys()]) settle(id)?.reject(new MinibridgeSdkError('CLOSED', 'this Minibridge SDK instance was closed'));
    },
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The error for the first field the violations name, in the order of the pay parameters. */
function paymentDataError(paymentData: unknown, violations: SchemaViolation[]): MinibridgeSdkError {
  const fields = Object.keys(PAYMENT_FIELD_CODES) as (keyof PaymentData)[];
  for (const field of fields) {
    const own = violations.filter((violation) => fieldOf(violation) === field);
    if (own.length === 0) continue;
    const value = isPlainObject(paymentData) ? paymentData[field] : undefined;
    return new MinibridgeSdkError(PAYMENT_FIELD_CODES[field], fieldMessage(field, value, own));
  }
  return new MinibridgeSdkError(
    'INVALID_PAYMENT_DATA',
    `pay expects { amount, currency, orderPaymentId, miniappOrderId?, extraParams? }: ${describeViolations(violations)}`,
  );
}

function fieldOf(violation: SchemaViolation): string | undefined {
  if (violation.keyword === 'required' && violation.instancePath === '/paymentData') return String(violation.params.missingProperty);
  return /^\/paymentData\/([^/]+)/.exec(violation.instancePath)?.[1];
}

function fieldMessage(field: keyof PaymentData, value: unknown, violations: SchemaViolation[]): string {
  if (value === undefined) return `${field} is required`;
  if (field === 'amount') {
    const why = typeof value === 'string' || typeof value === 'number' ? decimalViolation(String(value), AMOUNT_RULE) : undefined;
    return `amount ${why ?? 'must be a decimal string or number'} (got ${JSON.stringify(value) ?? String(value)})`;
  }
  return describeViolations(violations).replaceAll('/paymentData/', '');
}
