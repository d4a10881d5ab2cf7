import express from 'express';
import { referenceHostappHandlers, referenceHostappRouter, referenceMiniappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** The miniapp the strict host app knows, and the host app the strict miniapp knows. */
export const KNOWN_MINIAPP = 'ma_known';
export const KNOWN_HOSTAPP = 'ha_known';

/**
 * Not broken: a host app server that knows only its own miniapp refuses the kit's default
 * (the contract's example `app_id`) as UNAUTHORIZED, naming it. The kit must stop with one
 * hint naming --app-id instead of a table of failures (test/conformance/kit.test.ts passes it
 * with the known id).
 */
export function refusesUnknownMiniapp(): BrokenServer {
  const unknown = (appId: string) => ({ error_code: 'UNAUTHORIZED', error_message: `unknown miniapp ${appId}` }) as never;
  const reference = referenceHostappHandlers();
  const app = express().use(
    referenceHostappRouter({
      handlers: {
        createOrderPayment: (body, ctx) => (body.app_id === KNOWN_MINIAPP ? reference.createOrderPayment(body, ctx) : unknown(body.app_id)),
        getPaymentStatus: (query, ctx) => (query.app_id === KNOWN_MINIAPP ? reference.getPaymentStatus(query, ctx) : unknown(query.app_id)),
        receiveEvent: (event) => (event.app_id === KNOWN_MINIAPP ? { received: true } : unknown(event.app_id)),
      },
    }),
  );
  return {
    name: 'knows only its own miniapp (the kit not given --app-id)',
    subject: 'hostapp',
    app,
    catches: [],
    stops:
      /refused the miniapp the kit names by default \(app_id ma_7f3c2a, the contract's example\) on every operation asked \(E3 createHostappOrderPayment: error_code UNAUTHORIZED, E7 receiveHostappEvent: error_code UNAUTHORIZED; "unknown miniapp ma_7f3c2a"\)\.\nNothing else was checked\. Pass the miniapp your server knows with --app-id <app_id>/,
  };
}

/** A miniapp server that knows only its own host app: it refuses others with FORBIDDEN, without naming them. */
export function refusesUnknownHostapp(): BrokenServer {
  const forbidden = { error_code: 'FORBIDDEN', error_message: 'not a host app this miniapp works with' } as never;
  const app = express().use(
    referenceMiniappRouter({
      handlers: {
        receiveOrderCompletion: (body) => (body.hostapp_client_id === KNOWN_HOSTAPP ? { code: 'SUCCESS' } : forbidden),
        receiveEvent: (event) => (event.client_id === KNOWN_HOSTAPP ? { received: true } : forbidden),
      },
    }),
  );
  return {
    name: 'knows only its own host app (the kit not given --client-id)',
    subject: 'miniapp',
    app,
    catches: [],
    stops:
      /refused the host app the kit names by default \(client_id ha_superapp, .*\nNothing else was checked\. Pass the host app your server knows with --client-id <client_id>/,
  };
}
