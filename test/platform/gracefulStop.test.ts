/**
 * A graceful stop finishes the requests in flight and does not wait on connections that carry
 * none: a client's spare keep-alive connection, or one between requests.
 */
import type { ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { operation } from '../../src/contract/operations.js';
import type { Received } from '../support/fakePartners.js';
import { describeOnBackends } from '../support/databases.js';
import { e1Body, PlatformHarness } from '../support/platformHarness.js';

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

function closed(socket: Socket): Promise<string> {
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  return new Promise((resolve) => socket.once('close', () => resolve(received)));
}

describeOnBackends('graceful stop', (backend) => {
  const harness = new PlatformHarness();
  let answerE3: (() => void) | undefined;
  let e3Arrived!: Promise<void>;
  // The platform starts in a hook: a cold start on a busy machine must not eat the test's limit.
  beforeAll(async () => {
    e3Arrived = new Promise<void>((resolve) => {
      harness.hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) => {
        answerE3 = () =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: 'hop_graceful' }));
        resolve();
      });
    });
    // A grace period far past the test's limit: only closing idle connections at once (not the
    // grace timer, which would cut the request in flight too) lets this test pass.
    await harness.start({ backend: backend.name, config: { shutdownGraceMs: 600_000 } });
  });
  afterAll(() => harness.stop());

  test('stop closes idle connections at once and answers the request in flight before closing its connection', async () => {
    const spare = await open(harness.running.url);
    const spareClosed = closed(spare);
    const between = await open(harness.running.url);
    const betweenClosed = closed(between);
    between.write(`GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    await new Promise<void>((resolve) => between.once('data', () => resolve()));

    const busy = await open(harness.running.url);
    const busyClosed = closed(busy);
    const body = JSON.stringify(e1Body());
    busy.write(
      [
        `POST ${operation('createOrderPayment').path} HTTP/1.1`,
        'Host: localhost',
        `Authorization: ${harness.miniappAuth()}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        '',
        body,
      ].join('\r\n'),
    );
    await e3Arrived;

    const stopping = harness.running.close();
    // Closed while the request in flight still waits for E3: the stop did not wait for it.
    await Promise.all([spareClosed, betweenClosed]);

    answerE3!();
    const answer = await busyClosed;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer).toContain('"order_payment_id":"hop_graceful"');
    // Resolves within the test's limit, long before the grace period: the stop did not wait for it.
    await stopping;
  }, 30_000);
});

describeOnBackends('graceful stop, the client gone', (backend) => {
  const harness = new PlatformHarness();
  let answerE3: (() => void) | undefined;
  let e3Arrived!: Promise<void>;
  beforeAll(async () => {
    e3Arrived = new Promise<void>((resolve) => {
      harness.hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) => {
        answerE3 = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: 'hop_left' }));
        resolve();
      });
    });
    await harness.start({ backend: backend.name, config: { shutdownGraceMs: 600_000 } });
  });
  afterAll(() => harness.stop());

  test('an E1 whose client left while E3 ran is still recorded before the database closes', async () => {
    const { platform } = harness.running;
    const events: string[] = [];
    const create = platform.store.orderPayments.create.bind(platform.store.orderPayments);
    platform.store.orderPayments.create = async (...args) => {
      try {
        const result = await create(...args);
        events.push(`recorded ${result.outcome}`);
        return result;
      } catch (error) {
        events.push(`failed ${String(error)}`);
        throw error;
      }
    };
    const closeStore = platform.store.close.bind(platform.store);
    platform.store.close = async () => {
      events.push('database closed');
      await closeStore();
    };

    const client = await open(harness.running.url);
    const body = JSON.stringify(e1Body());
    client.write(
      [
        `POST ${operation('createOrderPayment').path} HTTP/1.1`,
        'Host: localhost',
        `Authorization: ${harness.miniappAuth()}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        '',
        body,
      ].join('\r\n'),
    );
    await e3Arrived;
    const left = closed(client);
    client.destroy();
    await left;
    const stopping = harness.running.close();
    // The server stops listening at once; give the stop the turns it would take to reach the database.
    for (let turn = 0; turn < 100 && harness.running.server.listening; turn++) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 50));
    answerE3!();
    await stopping;
    expect(events).toEqual(['recorded created', 'database closed']);
  }, 30_000);
});
