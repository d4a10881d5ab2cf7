import type { components } from '../../../generated/types/miniapp.js';
import type { JsonText } from '../../contract/json.js';
import type { Miniapp } from '../registry/registry.js';
import { reachOf } from './partnerUrl.js';
import { callPartner, type PartnerAnswer, type PartnerCaller, type PartnerOutcome } from './partnerCall.js';

type Schemas = components['schemas'];

function notRegistered(what: string): PartnerOutcome<never> {
  return { ok: false, failure: { kind: 'unreachable', detail: `the miniapp has not registered its ${what} URL` }, durationMs: 0 };
}

/** E6: one delivery attempt of an order completion callback, its body the text the outbox holds. */
export function deliverOrderCompletion(
  caller: PartnerCaller,
  miniapp: Miniapp,
  body: JsonText<Schemas['OrderCompletion']>,
  eventId: string,
  attempt: number,
): Promise<PartnerOutcome<PartnerAnswer<'receiveOrderCompletion'>>> {
  const url = miniapp.registration.urls?.complete_order;
  if (!url) return Promise.resolve(notRegistered('complete-order (E6)'));
  return callPartner(
    'receiveOrderCompletion',
    {
      url,
      reach: reachOf(miniapp.internalUrls, 'complete_order', url, caller.config),
      authorization: miniapp.authorization,
      signingSecrets: miniapp.signingSecrets,
      headers: { 'X-Minibridge-Event-Id': eventId, 'X-Minibridge-Delivery-Attempt': String(attempt) },
      messageId: eventId,
      body,
    },
    caller.metrics,
  );
}

/** E7 at a miniapp: an event from a host app. Its answer is forwarded as sent (ADR 0016). */
export function deliverEventToMiniapp(
  caller: PartnerCaller,
  miniapp: Miniapp,
  event: JsonText<Schemas['Event']>,
  eventId: string,
): Promise<PartnerOutcome<PartnerAnswer<'receiveMiniappEvent'>>> {
  const url = miniapp.registration.urls?.events;
  if (!url) return Promise.resolve(notRegistered('event receiver (E7)'));
  return callPartner(
    'receiveMiniappEvent',
    {
      url,
      reach: reachOf(miniapp.internalUrls, 'events', url, caller.config),
      authorization: miniapp.authorization,
      signingSecrets: miniapp.signingSecrets,
      headers: { 'X-Minibridge-Event-Id': eventId },
      messageId: eventId,
      body: event,
      reading: 'forwarded',
    },
    caller.metrics,
  );
}
