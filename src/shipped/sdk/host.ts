import {
  BRIDGE_ERROR_CODES,
  BRIDGE_PROTOCOL,
  BRIDGE_PROTOCOL_VERSION,
  MESSAGE_ID_MAX_LENGTH,
} from '../../../generated/sdk/bridge-contract.js';
import type { BridgeEndpoint } from './endpoints.js';
import {
  envelope,
  isBridgeTraffic,
  isHostMessageType,
  type BridgeError,
  type CustomEventData,
  type CustomEventRequest,
  type CustomEventResult,
  type ErrorDetail,
  type HostEvent,
  type HostEventDetail,
  type PaymentData,
  type PaymentResultStatus,
  type PayRequest,
  type PayResult,
} from './messages.js';
import { describeViolations, validateMessage } from './validation.js';

/**
 * The host side of the bridge for a web host app (the simulator; native host apps implement the
 * same messages, see docs/guides/07-native-bridge.md). Every message from the miniapp is checked
 * against the bridge schema; a request that breaks it is answered with an `error` message.
 */
export interface HostBridgeOptions {
  /** Toward the miniapp, typically `miniappFrameEndpoint(window, () => iframe.contentWindow, origin)`. */
  endpoint: BridgeEndpoint;
  /**
   * The `didReceivePaymentEvent(miniapp, paymentData)` of a web host: show the payment sheet and
   * resolve with the status to send back. A rejection is reported to the miniapp as `failed`.
   */
  onPay(paymentData: PaymentData): Promise<PaymentResultStatus>;
  /**
   * A custom event from the miniapp. For `sendPromise` (expectsReply) the resolved value is sent
   * back as the result and a rejection as `REJECTED` with its message; a promise that never
   * settles leaves the miniapp to its time-out.
   */
  onCustomEvent?(data: CustomEventData, context: { expectsReply: boolean }): unknown;
  /** Called with every message that was refused, and why (for logs and the simulator's event list). */
  onRefused?(data: unknown, reason: string): void;
}

export interface HostBridge {
  /** Sends an event to the miniapp's subscribe callbacks. Throws when detail breaks the schema. */
  emit(detail: HostEventDetail): void;
  /** Stops listening. */
  close(): void;
}

export function createHostBridge(options: HostBridgeOptions): HostBridge {
  const { endpoint } = options;
  let payInProgress: string | undefined;

  function answerError(data: Record<string, unknown>, error: ErrorDetail): void {
    options.onRefused?.(data, `${error.code}: ${error.message}`);
    const replyTo = data.id;
    // Without a readable id there is nobody to answer; the miniapp's own time-out applies.
    if (typeof replyTo !== 'string' || replyTo.length === 0 || replyTo.length > MESSAGE_ID_MAX_LENGTH) return;
    const message: BridgeError = {
      protocol: BRIDGE_PROTOCOL,
      version: BRIDGE_PROTOCOL_VERSION,
      id: envelope('error').id,
      type: 'error',
      replyTo,
      error,
    };
    endpoint.post(message);
  }

  async function handlePay(message: PayRequest): Promise<void> {
    if (payInProgress !== undefined) {
      answerError(message, {
        code: BRIDGE_ERROR_CODES.PAYMENT_IN_PROGRESS,
        message: `the payment sheet for ${payInProgress} is still open`,
      });
      return;
    }
    payInProgress = message.paymentData.orderPaymentId;
    let status: PaymentResultStatus;
    try {
      status = await options.onPay(message.paymentData);
    } catch {
      status = 'failed';
    } finally {
      payInProgress = undefined;
    }
    const result: PayResult = { ...envelope('pay_result'), replyTo: message.id, paymentData: { ...message.paymentData, status } };
    endpoint.post(result);
  }

  async function handleCustomEvent(message: CustomEventRequest): Promise<void> {
    let answer: Pick<CustomEventResult, 'ok' | 'result' | 'error'>;
    try {
      const result = await options.onCustomEvent?.(message.data, { expectsReply: message.expectsReply });
      answer = result === undefined ? { ok: true } : { ok: true, result };
    } catch (error) {
      answer = { ok: false, error: { code: BRIDGE_ERROR_CODES.REJECTED, message: error instanceof Error ? error.message : String(error) } };
    }
    if (!message.expectsReply) return;
    const reply: CustomEventResult = { ...envelope('custom_event_result'), replyTo: message.id, ...answer };
    const check = validateMessage('CustomEventResult', reply);
    if (check.ok) {
      endpoint.post(reply);
      return;
    }
    // e.g. a result that is not JSON-like; the miniapp learns why instead of waiting for its time-out
    const error = {
      code: BRIDGE_ERROR_CODES.REJECTED,
      message: `the host's result breaks the bridge schema: ${describeViolations(check.violations)}`,
    };
    endpoint.post({ ...envelope('custom_event_result'), replyTo: message.id, ok: false, error } satisfies CustomEventResult);
  }

  function receive(data: unknown): void {
    if (!isBridgeTraffic(data)) return;
    // An answer or an event is never answered, whatever its version or envelope: a host refusing
    // another side's refusal could answer it back and forth forever (openapi/bridge.schema.yaml).
    if (isHostMessageType(data.type)) return;
    const envelopeCheck = validateMessage('Envelope', data);
    if (!envelopeCheck.ok) {
      answerError(data, { code: BRIDGE_ERROR_CODES.INVALID_MESSAGE, message: describeViolations(envelopeCheck.violations) });
      return;
    }
    if (data.version !== BRIDGE_PROTOCOL_VERSION) {
      answerError(data, {
        code: BRIDGE_ERROR_CODES.UNSUPPORTED_VERSION,
        message: `this host speaks bridge protocol version ${BRIDGE_PROTOCOL_VERSION}, not ${String(data.version)}`,
      });
      return;
    }
    if (data.type === 'pay' || data.type === 'custom_event') {
      const check = validateMessage(data.type === 'pay' ? 'PayRequest' : 'CustomEventRequest', data);
      if (!check.ok) {
        answerError(data, { code: BRIDGE_ERROR_CODES.INVALID_MESSAGE, message: describeViolations(check.violations) });
        return;
      }
      // The message passed its definition's generated validator just above; the validator is not a type guard.
      if (data.type === 'pay') void handlePay(data as unknown as PayRequest);
      else void handleCustomEvent(data as unknown as CustomEventRequest);
      return;
    }
    // Any other type is not a request this host handles (a type a later version adds): it is
    // ignored, never answered (openapi/bridge.schema.yaml, ADR 0040).
  }

  const stop = endpoint.listen(receive);
  return {
    emit(detail) {
      const message: HostEvent = { ...envelope('host_event'), detail };
      const check = validateMessage('HostEvent', message);
      if (!check.ok) throw new TypeError(`host event breaks the bridge schema: ${describeViolations(check.violations)}`);
      endpoint.post(message);
    },
    close: stop,
  };
}
