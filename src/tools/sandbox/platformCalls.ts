import type { components } from '../../../generated/types/platform.js';
import { signRequest } from '../../wire/signing.js';
import { createPlatformClient, type PlatformClient } from '../../shipped/clients/platform.js';
import { parseLossless } from '../../contract/json.js';

type Schemas = components['schemas'];

/** The platform's answer as the sandbox passes it on: status, and the body read without loss. */
export interface PlatformAnswer {
  status: number;
  body: unknown;
}

export interface PlatformCaller {
  /** The platform's address, resolved at each call: in-process starts know it only once the platform listens. */
  platformUrl: () => string;
  /** The simulated partner's Authorization header. */
  authorization: string;
  /** The partner's signing secrets when the sandbox runs with signing on; requests are then signed. */
  signingSecrets: readonly string[];
}

/** A generated platform client speaking as one simulated partner. */
export function platformClient(caller: PlatformCaller): PlatformClient {
  return createPlatformClient({
    baseUrl: caller.platformUrl(),
    headers: { Authorization: caller.authorization },
    ...(caller.signingSecrets.length > 0 && { fetch: signingFetch(caller.signingSecrets) }),
  });
}

/** E5, sent by the simulated host app. */
export function completeOrder(caller: PlatformCaller, body: Schemas['CompleteOrderRequest']): Promise<PlatformAnswer> {
  return answerOf(platformClient(caller).POST('/api/v1/orders/complete-order/', { body, parseAs: 'text' }));
}

/** E1, sent by the simulated miniapp. */
export function createOrderPayment(caller: PlatformCaller, body: Schemas['CreateOrderPaymentRequest']): Promise<PlatformAnswer> {
  return answerOf(platformClient(caller).POST('/api/v1/orders/create-order-payment/', { body, parseAs: 'text' }));
}

/** E2, sent by the simulated miniapp. */
export function getPaymentStatus(caller: PlatformCaller, body: Schemas['GetPaymentStatusRequest']): Promise<PlatformAnswer> {
  return answerOf(platformClient(caller).POST('/api/v1/orders/get-payment-status/', { body, parseAs: 'text' }));
}

/** An event from the simulated miniapp to a host app. */
export function sendMiniappEvent(caller: PlatformCaller, body: Schemas['MiniappEventRequest']): Promise<PlatformAnswer> {
  return answerOf(platformClient(caller).POST('/api/v1/events/miniapp/', { body, parseAs: 'text' }));
}

/** E8, an event from the simulated host app to a miniapp. */
export function sendHostappEvent(caller: PlatformCaller, body: Schemas['HostappEventRequest']): Promise<PlatformAnswer> {
  return answerOf(platformClient(caller).POST('/api/v1/events/hostapp/', { body, parseAs: 'text' }));
}

async function answerOf(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<PlatformAnswer> {
  const { data, error, response } = await call;
  // Success bodies come as text (parseAs) and are read losslessly; error bodies carry no money.
  const body = typeof data === 'string' ? (data === '' ? undefined : parseLossless(data)) : (data ?? error);
  return { status: response.status, body };
}

function signingFetch(secrets: readonly string[]): (request: Request) => Promise<Response> {
  return async (request) => {
    const body = await request.text();
    const headers = new Headers(request.headers);
    for (const [name, value] of Object.entries(signRequest(body, secrets))) headers.set(name, value);
    return fetch(request.url, { method: request.method, headers, body, signal: request.signal });
  };
}
