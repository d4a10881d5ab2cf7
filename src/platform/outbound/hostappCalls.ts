import type { components } from '../../../generated/types/hostapp.js';
import { jsonText, type JsonText } from '../../contract/json.js';
import type { Hostapp } from '../registry/registry.js';
import { reachOf } from './partnerUrl.js';
import { callPartner, type PartnerAnswer, type PartnerCaller, type PartnerOutcome } from './partnerCall.js';
import { encodeUserIdHeader } from '../../wire/userIdHeader.js';

type Schemas = components['schemas'];

/** Who the payment is for: sent as X-User-ID, and the user's token where the host app wants it. */
export interface PaymentUser {
  hostappUserId?: string;
  userAccessToken?: string;
}

/** `<prefix> base64(client_id:secret)`, or `<prefix> <user access token>` when the host app opted in. */
export function hostappAuthorization(hostapp: Hostapp, userAccessToken?: string): string {
  if (hostapp.registration.use_access_token && userAccessToken) return `${hostapp.tokenPrefix} ${userAccessToken}`;
  return hostapp.authorization;
}

function notRegistered(what: string): PartnerOutcome<never> {
  return { ok: false, failure: { kind: 'unreachable', detail: `the host app has not registered its ${what} URL` }, durationMs: 0 };
}

function userHeader(user: PaymentUser) {
  return user.hostappUserId === undefined ? {} : { 'X-User-ID': encodeUserIdHeader(user.hostappUserId) };
}

/** E3: the body is the E3 request serialised once, the same text the idempotency hash was made from. */
export function createOrderPaymentAtHostapp(
  caller: PartnerCaller,
  hostapp: Hostapp,
  body: JsonText<Schemas['HostappCreateOrderPaymentRequest']>,
  user: PaymentUser,
): Promise<PartnerOutcome<PartnerAnswer<'createHostappOrderPayment'>>> {
  const url = hostapp.registration.urls?.create_order_payment;
  if (!url) return Promise.resolve(notRegistered('create-order-payment (E3)'));
  return callPartner(
    'createHostappOrderPayment',
    {
      url,
      reach: reachOf(hostapp.internalUrls, 'create_order_payment', url, caller.config),
      authorization: hostappAuthorization(hostapp, user.userAccessToken),
      signingSecrets: hostapp.signingSecrets,
      headers: userHeader(user),
      body,
    },
    caller.metrics,
  );
}

/** E4, by POST or GET as the host app registered. */
export function getPaymentStatusAtHostapp(
  caller: PartnerCaller,
  hostapp: Hostapp,
  query: Schemas['HostappPaymentStatusRequest'],
  user: PaymentUser,
): Promise<PartnerOutcome<PartnerAnswer<'getHostappPaymentStatus' | 'queryHostappPaymentStatus'>>> {
  const url = hostapp.registration.urls?.get_payment_status;
  if (!url) return Promise.resolve(notRegistered('get-payment-status (E4)'));
  const common = {
    url,
    reach: reachOf(hostapp.internalUrls, 'get_payment_status', url, caller.config),
    authorization: hostappAuthorization(hostapp, user.userAccessToken),
    signingSecrets: hostapp.signingSecrets,
    headers: userHeader(user),
  };
  if (hostapp.registration.payment_status_method === 'GET')
    return callPartner('queryHostappPaymentStatus', { ...common, query }, caller.metrics);
  return callPartner('getHostappPaymentStatus', { ...common, body: jsonText(query) }, caller.metrics);
}

/** E7 at a host app: an event from a miniapp. Its answer is forwarded as sent (ADR 0016). */
export function deliverEventToHostapp(
  caller: PartnerCaller,
  hostapp: Hostapp,
  event: JsonText<Schemas['Event']>,
  eventId: string,
): Promise<PartnerOutcome<PartnerAnswer<'receiveHostappEvent'>>> {
  const url = hostapp.registration.urls?.events;
  if (!url) return Promise.resolve(notRegistered('event receiver (E7)'));
  return callPartner(
    'receiveHostappEvent',
    {
      url,
      reach: reachOf(hostapp.internalUrls, 'events', url, caller.config),
      authorization: hostappAuthorization(hostapp),
      signingSecrets: hostapp.signingSecrets,
      headers: { 'X-Minibridge-Event-Id': eventId },
      messageId: eventId,
      body: event,
      reading: 'forwarded',
    },
    caller.metrics,
  );
}
