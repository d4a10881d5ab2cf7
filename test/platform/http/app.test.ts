/**
 * The server's listener (app.ts) runs before Express for every request (ADR 0045): whatever it
 * reads of a request must not throw, since nothing above it catches (Express's router did, for
 * the middleware that used to do this work). A request target in absolute form whose host is no
 * host (`GET http://[/ HTTP/1.1`) is accepted by Node's parser but makes `req.path` throw; it is
 * answered NOT_FOUND in the contract's shape, and the platform goes on answering. Raw sockets,
 * every wait bounded.
 */
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { operation } from '../../../src/contract/operations.js';
import { PlatformHarness } from '../../support/platformHarness.js';

const WAIT_MS = 10_000;

const harness = new PlatformHarness();
// At `info`, so the request log reads each request's path too (it skips that below `info`).
const log = pino({ level: 'info' }, new Writable({ write: (_chunk, _encoding, done) => done() }));
beforeAll(() => harness.start({ log }), 120_000);
afterAll(() => harness.stop());

/** Sends `request` on a fresh socket; the status line, headers and body of what came back before the platform closed it. */
async function exchange(request: string): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(harness.running.url);
  const socket: Socket = await new Promise((resolve, reject) => {
    const opened = connect(Number(port), hostname, () => resolve(opened));
    opened.once('error', reject);
  });
  let received = '';
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, WAIT_MS);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const ended = () => {
      clearTimeout(timer);
      resolve();
    };
    socket.on('end', ended);
    socket.on('close', ended);
    socket.on('error', () => undefined);
    socket.write(request);
  });
  socket.destroy();
  const end = received.indexOf('\r\n\r\n');
  const head = end === -1 ? received : received.slice(0, end);
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body: end === -1 ? '' : received.slice(end + 4) };
}

const e1 = operation('createOrderPayment').path;

test.each([
  ['GET', 'http://[/'],
  ['GET', 'http://[::1/'],
  ['POST', `http://[::1]x${e1}`],
])('%s %s (a target req.path cannot read) is answered NOT_FOUND as JSON, and the platform goes on', async (method, target) => {
  const answer = await exchange(`${method} ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  expect(answer.status).toBe(404);
  expect(answer.headers).toMatch(/\r\ncontent-type: application\/json; charset=utf-8/i);
  expect(answer.headers).toMatch(/\r\nx-request-id: /i);
  expect(JSON.parse(answer.body)).toMatchObject({ error_code: 'NOT_FOUND' });
  const after = await exchange(`GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  expect(after.status).toBe(200);
});
