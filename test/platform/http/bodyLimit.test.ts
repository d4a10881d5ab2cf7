/**
 * A body past the limit is answered 413 PAYLOAD_TOO_LARGE in a way the client can read: the
 * platform keeps reading (and dropping) the rest of the body, so a client that writes its whole
 * body before it reads still gets the answer, and the connection stays usable. A body past the
 * discard bound gets the connection closed instead of being read for ever.
 */
import type { ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { operation } from '../../../src/contract/operations.js';
import { maxBodyBytes } from '../../../src/contract/limits.js';
import { discardLimitBytes } from '../../../src/wire/rawBody.js';
import { e1Body, PlatformHarness } from '../../support/platformHarness.js';

const harness = new PlatformHarness();
// An order payment id of its own for each E1 (ADR 0016 binds one to one order), whatever order the tests run in.
let orders = 0;
beforeAll(async () => {
  harness.hostapp.on('/create-order-payment', (_request: unknown, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_limit_${++orders}` }));
  });
  await harness.start();
}, 120_000);
afterAll(() => harness.stop());

const PATH = operation('createOrderPayment').path;

/** Everything the socket receives until it closes or `until` matches what was received. */
function reader(socket: Socket): (until: RegExp) => Promise<string> {
  let received = '';
  let closed = false;
  const waiters: Array<() => void> = [];
  const wake = () => waiters.splice(0).forEach((resolve) => resolve());
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    wake();
  });
  socket.on('close', () => {
    closed = true;
    wake();
  });
  socket.on('error', () => undefined);
  return async (until) => {
    while (!until.test(received) && !closed) await new Promise<void>((resolve) => waiters.push(resolve));
    const text = received;
    received = '';
    return text;
  };
}

function open(): Promise<Socket> {
  const { hostname, port } = new URL(harness.running.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

function head(lines: string[]): string {
  return [
    `POST ${PATH} HTTP/1.1`,
    `Host: localhost`,
    `Authorization: ${harness.miniappAuth()}`,
    'Content-Type: application/json',
    ...lines,
    '',
    '',
  ].join('\r\n');
}

/** Writes all of `bytes`, waiting for the socket to drain as a client that does not read would. */
async function writeAll(socket: Socket, bytes: Buffer): Promise<void> {
  for (let offset = 0; offset < bytes.length; offset += 64 * 1024) {
    if (!socket.write(bytes.subarray(offset, offset + 64 * 1024))) await new Promise((resolve) => socket.once('drain', resolve));
  }
}

const oversized = () => Buffer.from(JSON.stringify(e1Body({ note: 'x'.repeat(3 * maxBodyBytes()) })));
const completeAnswer = /\r\n\r\n\{[^]*\}$/;

test('a declared body past the limit is read to its end, answered 413, and the connection serves the next request', async () => {
  const socket = await open();
  const read = reader(socket);
  const body = oversized();
  socket.write(head([`Content-Length: ${body.length}`]));
  await writeAll(socket, body);
  const answer = await read(completeAnswer);
  expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  expect(answer).toContain('"error_code":"PAYLOAD_TOO_LARGE"');

  const next = Buffer.from(JSON.stringify(e1Body()));
  socket.write(head([`Content-Length: ${next.length}`]) + next.toString());
  expect(await read(completeAnswer)).toMatch(/^HTTP\/1\.1 200 /);
  socket.destroy();
}, 120_000);

test('a chunked body that grows past the limit is answered 413 as well', async () => {
  const socket = await open();
  const read = reader(socket);
  const body = oversized();
  socket.write(head(['Transfer-Encoding: chunked']));
  for (let offset = 0; offset < body.length; offset += 64 * 1024) {
    const chunk = body.subarray(offset, offset + 64 * 1024);
    await writeAll(socket, Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
  }
  socket.write('0\r\n\r\n');
  const answer = await read(completeAnswer);
  expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  expect(answer).toContain('"error_code":"PAYLOAD_TOO_LARGE"');
  socket.destroy();
}, 120_000);

test('a body past the discard bound gets the 413 and then the connection closed', async () => {
  const socket = await open();
  const read = reader(socket);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head([`Content-Length: ${discardLimitBytes() * 4}`]));
  const answer = await read(completeAnswer);
  expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  const chunk = Buffer.alloc(256 * 1024, 'x');
  let written = 0;
  while (!socket.destroyed && written < discardLimitBytes() * 2) {
    await new Promise<void>((resolve) => {
      if (socket.write(chunk)) resolve();
      else socket.once('drain', () => resolve()).once('close', () => resolve());
    });
    written += chunk.length;
  }
  await closed;
  expect(written).toBeLessThan(discardLimitBytes() * 2);
}, 120_000);

/** A valid E1 body padded with JSON whitespace to exactly `size` bytes. */
function bodyOfSize(size: number): Buffer {
  const text = JSON.stringify(e1Body());
  return Buffer.from(text.slice(0, -1) + ' '.repeat(size - Buffer.byteLength(text)) + '}');
}

test('the limit is the contract x-max-body-bytes: a body of exactly that size is read, one byte more is 413', async () => {
  const socket = await open();
  const read = reader(socket);
  const exact = bodyOfSize(maxBodyBytes());
  socket.write(head([`Content-Length: ${exact.length}`]));
  await writeAll(socket, exact);
  expect(await read(completeAnswer)).toMatch(/^HTTP\/1\.1 200 /);

  const over = bodyOfSize(maxBodyBytes() + 1);
  socket.write(head([`Content-Length: ${over.length}`]));
  await writeAll(socket, over);
  const answer = await read(completeAnswer);
  expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  expect(answer).toContain('"error_code":"PAYLOAD_TOO_LARGE"');
  socket.destroy();
}, 120_000);
