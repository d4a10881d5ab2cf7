import type express from 'express';
import { basicAuthorization } from '../../wire/authorization.js';
import { createMiniappRouter, type OrderCompletionBody, type PartnerKitLogger } from '../../shipped/partner-kit/index.js';
import { addBridgeRunRoutes, bridgeConformancePage, BridgeRuns } from './bridgeRuns.js';
import { eventFields, recordEvents, type ReceivedEvent } from './events.js';
import { controlRouter, partnerApp, relayToPlatform, sendJson } from './http.js';
import { createOrderPayment, getPaymentStatus, sendMiniappEvent, type PlatformCaller } from './platformCalls.js';

/** One E6 delivery as the simulated miniapp received it: every attempt, repeats included. */
export interface ReceivedCompletion {
  event_id: string;
  delivery_attempt: number | undefined;
  /** An event id already received: a retry or a redelivery, answered as the first was. */
  repeat: boolean;
  body: unknown;
  received_at: string;
}

/** What the simulated miniapp server got from the platform, in arrival order. */
export interface MiniappReceived {
  completions: ReceivedCompletion[];
  events: ReceivedEvent[];
}

export interface SandboxMiniappOptions {
  appId: string;
  secretKey: string;
  signingSecrets: readonly string[];
  /** The sandbox host app, the default recipient and payer of the control routes. */
  hostappId: string;
  /** The platform's address, resolved at each call. */
  platformUrl: () => string;
  logger: PartnerKitLogger;
  /** Also told of every E6 it records (the sandbox passes them to the demo miniapp). */
  onOrderCompletion?: (eventId: string, body: OrderCompletionBody) => void;
}

export interface SandboxMiniapp {
  app: express.Express;
  received: MiniappReceived;
  /** What the bridge conformance page reported (`/sandbox/bridge-runs`). */
  bridgeRuns: BridgeRuns;
}

/**
 * A miniapp server built with the partner kit: E6 records every delivery and acts on the first
 * of each X-Minibridge-Event-Id, and E7 acknowledges events. Its control routes show
 * what arrived and act as the miniapp towards the platform: send an event, create an order
 * payment, ask its status (so a browser never holds the miniapp's secret). It also serves the
 * bridge conformance page and keeps the runs it reports.
 */
export function createSandboxMiniapp(options: SandboxMiniappOptions): SandboxMiniapp {
  const received: MiniappReceived = { completions: [], events: [] };
  const completedEvents = new Set<string>();
  const caller: PlatformCaller = {
    platformUrl: options.platformUrl,
    signingSecrets: options.signingSecrets,
    authorization: basicAuthorization(options.appId, options.secretKey),
  };

  const router = createMiniappRouter({
    appId: options.appId,
    secretKey: options.secretKey,
    signingSecrets: options.signingSecrets.length > 0 ? options.signingSecrets : undefined,
    // Idempotent on X-Minibridge-Event-Id by its own hand rather than the kit's memory, which
    // would answer a repeat without calling the handler: /sandbox/received lists every delivery
    // (a redelivery from the dashboard shows up), and the demo is told of each event once.
    idempotency: 'off',
    logger: options.logger,
    handlers: {
      receiveOrderCompletion: (body, ctx) => {
        const repeat = completedEvents.has(ctx.eventId);
        completedEvents.add(ctx.eventId);
        received.completions.push({
          event_id: ctx.eventId,
          delivery_attempt: ctx.deliveryAttempt,
          repeat,
          body,
          received_at: new Date().toISOString(),
        });
        if (!repeat) options.onOrderCompletion?.(ctx.eventId, body);
        return { code: 'SUCCESS' };
      },
      receiveEvent: recordEvents(received.events),
    },
  });

  // The miniapp speaks for itself; the host app is the sandbox's unless the body names another.
  const parties = (body: Record<string, unknown>) => ({
    app_id: options.appId,
    client_id: (body.client_id as string | undefined) ?? options.hostappId,
  });

  const control = controlRouter();
  control.get('/received', (_req, res) => sendJson(res, 200, received));
  control.post(
    '/send-event',
    relayToPlatform((body) => sendMiniappEvent(caller, { ...parties(body), ...eventFields(body) })),
  );
  control.post(
    '/create-order-payment',
    // The order is the page's, passed on as sent: the platform validates it against E1's schema.
    relayToPlatform((body) => createOrderPayment(caller, { ...parties(body), order: body.order as never })),
  );
  control.post(
    '/get-payment-status',
    relayToPlatform((body) => getPaymentStatus(caller, { ...parties(body), order_payment_id: body.order_payment_id as string })),
  );
  const bridgeRuns = new BridgeRuns();
  addBridgeRunRoutes(control, bridgeRuns);
  const app = partnerApp(router, control);
  // The bridge conformance page is a miniapp page: served here, it reports to this server (ADR 0040).
  app.use('/bridge-conformance', bridgeConformancePage());
  return { app, received, bridgeRuns };
}
