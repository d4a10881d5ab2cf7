import type { components } from '../../../generated/types/miniapp.js';
import { basicAuthorization } from '../../wire/credentials.js';
import { createMiniappClient } from '../../shipped/clients/miniapp.js';
import type { Miniapp } from '../registry/registry.js';
import { callPartner, type PartnerOperationId, type PartnerOutcome } from './partnerCall.js';
import { clientFor, registeredFetch } from './registeredFetch.js';

type Schemas = components['schemas'];

const clients = new WeakMap<Miniapp, Map<string, ReturnType<typeof createMiniappClient>>>();

function client(miniapp: Miniapp, operationId: PartnerOperationId, url: string | undefined) {
  if (!url) return undefined;
  return clientFor(clients, miniapp, operationId, url, () =>
    createMiniappClient({ baseUrl: 'http://registered-url.invalid', fetch: registeredFetch(url, miniapp.signingSecrets, operationId) }),
  );
}

function notRegistered(what: string): PartnerOutcome {
  return { ok: false, failure: { kind: 'unreachable', detail: `the miniapp has not registered its ${what} URL` }, durationMs: 0 };
}

/** E6: one delivery attempt of an order completion callback. */
export function deliverOrderCompletion(
  miniapp: Miniapp,
  body: Schemas['OrderCompletion'],
  eventId: string,
  attempt: number,
): Promise<PartnerOutcome> {
  const api = client(miniapp, 'receiveOrderCompletion', miniapp.registration.urls?.complete_order);
  if (!api) return Promise.resolve(notRegistered('complete-order (E6)'));
  const header = { 'X-Minibridge-Event-Id': eventId, 'X-Minibridge-Delivery-Attempt': String(attempt) };
  const headers = { Authorization: basicAuthorization(miniapp.id, miniapp.secretKey) };
  return callPartner('receiveOrderCompletion', (signal) =>
    api.POST('/complete-order', { body, params: { header }, headers, parseAs: 'arrayBuffer', signal }),
  );
}

/** E7 at a miniapp: an event from a host app. */
export function deliverEventToMiniapp(miniapp: Miniapp, event: Schemas['Event'], eventId: string): Promise<PartnerOutcome> {
  const api = client(miniapp, 'receiveMiniappEvent', miniapp.registration.urls?.events);
  if (!api) return Promise.resolve(notRegistered('event receiver (E7)'));
  const headers = { Authorization: basicAuthorization(miniapp.id, miniapp.secretKey) };
  return callPartner(
    'receiveMiniappEvent',
    (signal) =>
      api.POST('/events', {
        body: event,
        params: { header: { 'X-Minibridge-Event-Id': eventId } },
        headers,
        parseAs: 'arrayBuffer',
        signal,
      }),
    'forwarded',
  );
}
