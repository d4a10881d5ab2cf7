/**
 * A graceful stop finishes the requests in flight and does not wait on connections that carry
 * none: a client's spare keep-alive connection, or one between requests.
 */
import type { ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { expect, test } from 'vitest';
import { operation } from '../../src/contract/operations.js';
import type { Received } from '../support/fakePartners.js';
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

test('stop closes idle connections at once and answers the request in flight before closing its connection', async () => {
  const harness = new PlatformHarness();
  let answerE3: (() => void) | undefined;
  const e3Arrived = new Promise<void>((resolve) => {
    harness.hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) => {
      answerE3 = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: 'hop_graceful' }));
      resolve();
    });
  });
  await harness.start();
  try {
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

    const started = Date.now();
    const stopping = harness.running.close();
    await Promise.all([spareClosed, betweenClosed]);
    expect(Date.now() - started).toBeLessThan(2_000);

    answerE3!();
    const answer = await busyClosed;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer).toContain('"order_payment_id":"hop_graceful"');
    await stopping;
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    await harness.stop();
  }
}, 30_000);
