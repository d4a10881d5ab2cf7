import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization } from '../../src/shipped/partner-kit/index.js';
import { createSandboxMiniapp } from '../../src/tools/sandbox/sandboxMiniapp.js';

// The sandbox miniapp's /sandbox/received lists every delivery of an E6 callback and of an E7
// event: a retry or a redelivery from the dashboard shows up as a repeat, and the demo miniapp is
// told of each event once.

const appId = 'ma_received';
const secretKey = 'received-secret';
const completion =
  '{"miniapp_order_id":"ORD-1","hostapp_order_payment_id":"hop_1","hostapp_client_id":"ha_received","payment_status":"paid"}';
const event =
  '{"app_id":"ma_received","client_id":"ha_received","event_type":"order_status_update","payload":{"order_payment_id":"hop_1"}}';

const told: string[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  const { app } = createSandboxMiniapp({
    appId,
    secretKey,
    signingSecrets: [],
    hostappId: 'ha_received',
    platformUrl: () => 'http://127.0.0.1:9',
    logger: { warn: () => undefined, error: () => undefined },
    onOrderCompletion: (eventId) => told.push(eventId),
  });
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function deliver(path: string, body: string, eventId: string, attempt: number) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: basicAuthorization(appId, secretKey),
      'x-minibridge-event-id': eventId,
      'x-minibridge-delivery-attempt': String(attempt),
    },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('/sandbox/received', () => {
  it('lists every delivery of an event, repeats marked, and answers each as the first', async () => {
    const first = await deliver('/complete-order', completion, 'evt_a', 1);
    const retry = await deliver('/complete-order', completion, 'evt_a', 2);
    const other = await deliver('/complete-order', completion, 'evt_b', 1);
    const redelivered = await deliver('/complete-order', completion, 'evt_a', 3);
    for (const answer of [first, retry, other, redelivered]) expect(answer).toEqual({ status: 200, body: { code: 'SUCCESS' } });
    const e7 = await deliver('/events', event, 'evt_e7', 1);
    const e7Again = await deliver('/events', event, 'evt_e7', 2);
    expect(e7Again.body).toEqual(e7.body);

    const listed = (await (await fetch(`${url}/sandbox/received`)).json()) as {
      completions: { event_id: string; delivery_attempt: number; repeat: boolean }[];
      events: { event_id: string; repeat: boolean }[];
    };
    expect(listed.completions.map(({ event_id, delivery_attempt, repeat }) => [event_id, delivery_attempt, repeat])).toEqual([
      ['evt_a', 1, false],
      ['evt_a', 2, true],
      ['evt_b', 1, false],
      ['evt_a', 3, true],
    ]);
    expect(listed.events.map(({ event_id, repeat }) => [event_id, repeat])).toEqual([
      ['evt_e7', false],
      ['evt_e7', true],
    ]);
    expect(told).toEqual(['evt_a', 'evt_b']);
  });
});
