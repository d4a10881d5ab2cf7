import { BRIDGE_PROTOCOL, BRIDGE_PROTOCOL_VERSION } from '../../../generated/sdk/bridge-contract.js';
import type { components } from '../../../generated/sdk/bridge-types.js';
import type { ValidatedDefinition } from './validation.js';

type Schemas = components['schemas'];
export type PaymentData = Schemas['PaymentData'];
export type PaymentResultData = Schemas['PaymentResultData'];
export type PaymentResultStatus = Schemas['PaymentResultStatus'];
export type CustomEventData = Schemas['CustomEventData'];
export type CustomEventName = Schemas['CustomEventName'];
export type HostEventDetail = Schemas['HostEventDetail'];
export type ErrorDetail = Schemas['ErrorDetail'];
export type Envelope = Schemas['Envelope'];
export type PayRequest = Schemas['PayRequest'];
export type PayResult = Schemas['PayResult'];
export type CustomEventRequest = Schemas['CustomEventRequest'];
export type CustomEventResult = Schemas['CustomEventResult'];
export type HostEvent = Schemas['HostEvent'];
export type BridgeError = Schemas['BridgeError'];
export type BridgeMessage = PayRequest | PayResult | CustomEventRequest | CustomEventResult | HostEvent | BridgeError;

/**
 * The messages a host app sends, by `type`, with the bridge schema's definition of each: the
 * answers and the event. A miniapp receives exactly these; a host app never answers one, whatever
 * its version or envelope, so two sides can never answer each other in a loop (bridge.schema.yaml).
 */
export const HOST_MESSAGE_DEFINITIONS = {
  pay_result: 'PayResult',
  custom_event_result: 'CustomEventResult',
  error: 'BridgeError',
  host_event: 'HostEvent',
} as const satisfies Record<Exclude<BridgeMessage['type'], 'pay' | 'custom_event'>, ValidatedDefinition>;

export type HostMessageType = keyof typeof HOST_MESSAGE_DEFINITIONS;

/** Whether type names a message a host app sends (an own member only: `constructor` and `__proto__` are input too). */
export function isHostMessageType(type: unknown): type is HostMessageType {
  return typeof type === 'string' && Object.hasOwn(HOST_MESSAGE_DEFINITIONS, type);
}

let counter = 0;
const session = Math.random().toString(36).slice(2, 10);

/** A message id unique within this page: a random session part (two frames never clash) and a counter. */
export function nextMessageId(): string {
  counter += 1;
  return `${session}-${counter}`;
}

/** The members every message starts with. */
export function envelope<T extends BridgeMessage['type']>(
  type: T,
): { protocol: typeof BRIDGE_PROTOCOL; version: typeof BRIDGE_PROTOCOL_VERSION; id: string; type: T } {
  return { protocol: BRIDGE_PROTOCOL, version: BRIDGE_PROTOCOL_VERSION, id: nextMessageId(), type };
}

/** True when data claims to be a bridge message (other postMessage traffic is ignored silently). */
export function isBridgeTraffic(data: unknown): data is Record<string, unknown> {
  return typeof data === 'object' && data !== null && (data as { protocol?: unknown }).protocol === BRIDGE_PROTOCOL;
}

/** A copy without members whose value is undefined: JSON drops them, structured clone keeps them. */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as T;
}
