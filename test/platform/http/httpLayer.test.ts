/**
 * What Node's HTTP layer refuses before any route runs is answered in the contract's shape
 * (ADR 0015): headers too large 431, malformed requests and chunking 400, a request not received
 * in full within the request time-out 408, each with `{error_code, error_message}` JSON. A client
 * that trickles its body is cut; one that goes away mid-body is logged as an abort, not as a
 * failure. Raw sockets, every wait bounded.
 */
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseLossless } from '../../../src/contract/json.js';
import { maxHeaderBytes } from '../../../src/contract/limits.js';
import { documentedError } from '../../../src/contract/errors.js';
import { check, contractOperations, operation, type OperationContract } from '../../../src/contract/operations.js';
import { e1Body, PlatformHarness } from '../../support/platformHarness.js';

const REQUEST_TIMEOUT_MS = 600;
const WAIT_MS = 30_000;
const PATH = operation('createOrderPayment').path;
const logLines: Array<{ level: number; msg: string }> = [];

const harness = new PlatformHarness();
beforeAll(async () => {
  harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_1' });
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
          logLines.push(JSON.parse(line) as { level: number; msg: string });
        done();
      },
    }),
  );
  await harness.start({ config: { requestTimeoutMs: REQUEST_TIMEOUT_MS }, log });
}, 120_000);
afterAll(() => harness.stop());

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
  closed: boolean;
}

/** Sends `parts` (with `pauseMs` between them) on a fresh socket; resolves when the platform ends the connection. */
async function exchange(parts: Array<string | Buffer>, pauseMs = 0): Promise<RawAnswer> {
  const { hostname, port } = new URL(harness.running.url);
  const socket: Socket = await new Promise((resolve, reject) => {
    const opened = connect(Number(port), hostname, () => resolve(opened));
    opened.once('error', reject);
  });
  let received = '';
  const done = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), WAIT_MS);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const ended = () => {
      clearTimeout(timer);
      resolve(true);
    };
    socket.on('end', ended);
    socket.on('close', ended);
    socket.on('error', () => undefined);
  });
  void (async () => {
    for (const part of parts) {
      if (socket.destroyed) return;
      socket.write(part);
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  const closed = await done;
  socket.destroy();
  const answer = split(received);
  return { status: answer?.status ?? 0, headers: answer?.headers ?? '', body: answer?.body ?? '', closed };
}

function split(text: string): { status: number; headers: string; body: string; length: number } | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const headers = text.slice(0, end);
  const length = Number(/content-length: (\d+)/i.exec(headers)?.[1] ?? 0);
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0), headers, body: text.slice(end + 4), length };
}

function expectContractError(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status, answer.headers).toBe(status);
  expect(answer.headers).toMatch(/content-type: application\/json/i);
  const body = parseLossless(answer.body) as { error_code: string; error_message: string };
  expect(body.error_code).toBe(code);
  expect(body.error_message.length).toBeGreaterThan(10);
  expect(Object.keys(body).sort()).toEqual(['error_code', 'error_message']);
}

const start = (lines: string[]) =>
  [
    `POST ${PATH} HTTP/1.1`,
    'Host: localhost',
    `Authorization: ${harness.miniappAuth()}`,
    'Content-Type: application/json',
    ...lines,
    '',
    '',
  ].join('\r\n');

describe('refusals of the HTTP layer', { timeout: 60_000 }, () => {
  test('an Expect other than 100-continue: 417 with the contract body, not an empty one', async () => {
    expectContractError(
      await exchange([start(['Expect: 200-ok', 'Content-Length: 2', 'Connection: close']) + '{}']),
      417,
      'INVALID_REQUEST',
    );
  });

  test('an operation path is matched as the router matches it: any case, with or without its trailing slash, never with two', async () => {
    const e1 = (path: string) =>
      fetch(harness.running.url + path, {
        method: 'POST',
        headers: { authorization: harness.miniappAuth(), 'content-type': 'application/json' },
        // The fake host app answers every E3 with hop_1: one order, so each request after the first is its idempotent repeat.
        body: JSON.stringify(e1Body({ miniapp_order_id: 'ORD-idle-1' })),
      });
    const bare = PATH.replace(/\/$/, '');
    for (const path of [PATH, bare, PATH.toUpperCase(), bare.toUpperCase()]) {
      const answer = await e1(path);
      expect(answer.status, `${path}: ${await answer.text()}`).toBe(200);
    }
    const doubled = await e1(`${PATH}/`);
    expect(doubled.status).toBe(404);
    expect(((await doubled.json()) as { error_code: string }).error_code).toBe('NOT_FOUND');
    // The answer is the contract's JSON, with no ETag: nothing the platform answers is cacheable.
    const answer = await e1(PATH);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('etag')).toBeNull();
  });

  test('when answering an error fails too, the client still gets the contract body, not an empty answer or a hanging socket', async () => {
    const { platform } = harness.running;
    const limiters = platform.rateLimiters;
    // A refusal whose header value Node will not write: sendError throws while answering.
    const refusing = {
      ...limiters.partner,
      take: () => ({ allowed: false, retryAfterSeconds: 1, headers: { 'Retry-After': '1\r\nX-Injected: yes' } }),
    };
    platform.rateLimiters = { ...limiters, partner: refusing };
    try {
      const answer = await fetch(harness.running.url + PATH, {
        method: 'POST',
        headers: { authorization: harness.miniappAuth(), 'content-type': 'application/json' },
        body: JSON.stringify(e1Body()),
        signal: AbortSignal.timeout(WAIT_MS),
      });
      expect(answer.headers.get('x-injected')).toBeNull();
      expect(await answer.json()).toEqual({ error_code: 'UNKNOWN_ERROR', error_message: expect.any(String) });
      expect(answer.status).toBe(documentedError('UNKNOWN_ERROR', operation('createOrderPayment')).status);
    } finally {
      platform.rateLimiters = limiters;
    }
  });

  test('OPTIONS on an operation path: 405 with the contract body and Allow, not Express text/plain', async () => {
    const answer = await exchange([[`OPTIONS ${PATH} HTTP/1.1`, 'Host: localhost', 'Connection: close', '', ''].join('\r\n')]);
    expectContractError(answer, 405, 'METHOD_NOT_ALLOWED');
    expect(answer.headers).toMatch(/\r\nallow: POST/i);
  });

  test('every platform path answers a method it does not take with 405 and Allow, and every operation on it documents that', async () => {
    const byPath = new Map<string, OperationContract[]>();
    for (const op of contractOperations().values()) if (op.api === 'platform') byPath.set(op.path, [...(byPath.get(op.path) ?? []), op]);
    for (const [template, ops] of byPath) {
      for (const op of ops) expect(op.responses.has('405'), `${op.operationId} documents 405`).toBe(true);
      const path = template.replace(/\{[^}]+\}/g, (name) => (/_id\}$/.test(name) ? '0b6e2f1c-8a43-4c55-9a7e-3f0e6f1c2d9b' : 'hostapps'));
      const allowed = ops.map((op) => op.method.toUpperCase());
      for (const method of ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'].filter((candidate) => !allowed.includes(candidate))) {
        const answer = await fetch(`${harness.running.url}${path}`, { method });
        expect(answer.status, `${method} ${path}`).toBe(405);
        expect(answer.headers.get('allow')?.split(', ').sort()).toEqual([...allowed].sort());
        const body = (await answer.json()) as { error_code: string };
        expect(check(ops[0]!.responses.get('405')!.validate!, body).valid, `${method} ${path}`).toBe(true);
        expect(body.error_code).toBe('METHOD_NOT_ALLOWED');
      }
    }
  });

  test("headers larger than the contract's x-max-header-bytes: 431 with the contract body; just under it they are read", async () => {
    expectContractError(await exchange([start([`X-Padding: ${'a'.repeat(maxHeaderBytes())}`])]), 431, 'PAYLOAD_TOO_LARGE');
    const under = await exchange([
      start([`X-Padding: ${'a'.repeat(maxHeaderBytes() - 1024)}`, 'Content-Length: 2', 'Connection: close']) + '{}',
    ]);
    expectContractError(under, 400, 'INVALID_ORDER_DATA');
  });

  test('a malformed chunk size: 400 with the contract body', async () => {
    expectContractError(await exchange([start(['Transfer-Encoding: chunked']), 'zz\r\n{}\r\n0\r\n\r\n']), 400, 'INVALID_REQUEST');
  });

  test('a request line that is not HTTP: 400 with the contract body', async () => {
    expectContractError(await exchange(['GARBAGE\x01 / HTTP/1.1\r\n\r\n']), 400, 'INVALID_REQUEST');
  });

  test('a chunk size of ffffffffffffffff gets an answer (408 once the time-out passes) and the socket is closed', async () => {
    const answer = await exchange([start(['Transfer-Encoding: chunked']), 'ffffffffffffffff\r\n{"app_id":']);
    expectContractError(answer, 408, 'INVALID_REQUEST');
    expect(answer.closed).toBe(true);
  });

  test('a body trickled slower than the request time-out allows is cut with 408', async () => {
    const body = JSON.stringify(e1Body());
    const parts = [start([`Content-Length: ${Buffer.byteLength(body)}`]), ...body.match(/.{1,4}/g)!];
    const answer = await exchange(parts, 100);
    expectContractError(answer, 408, 'INVALID_REQUEST');
    expect(answer.closed).toBe(true);
  });

  test('a keep-alive connection idle for longer than the request time-out still serves its next request', async () => {
    const body = JSON.stringify(e1Body({ miniapp_order_id: 'ORD-idle-1' }));
    const request = start([`Content-Length: ${Buffer.byteLength(body)}`]) + body;
    const { hostname, port } = new URL(harness.running.url);
    const socket: Socket = await new Promise((resolve, reject) => {
      const opened = connect(Number(port), hostname, () => resolve(opened));
      opened.once('error', reject);
    });
    try {
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      const answered = async (count: number) => {
        const deadline = Date.now() + WAIT_MS;
        while ((received.match(/HTTP\/1\.1 /g) ?? []).length < count && Date.now() < deadline && !socket.destroyed)
          await new Promise((resolve) => setTimeout(resolve, 20));
      };
      socket.write(request);
      await answered(1);
      await new Promise((resolve) => setTimeout(resolve, REQUEST_TIMEOUT_MS * 3));
      socket.write(request); // the same E1 again: answered idempotently, 200
      await answered(2);
      expect(received.match(/HTTP\/1\.1 200/g)?.length, received).toBe(2);
    } finally {
      socket.destroy();
    }
  });

  test('a client that goes away mid-body is logged as an abort, never as an unexpected failure', async () => {
    const before = logLines.length;
    const body = JSON.stringify(e1Body());
    await exchangeThenClose([start([`Content-Length: ${Buffer.byteLength(body) + 100}`]), body.slice(0, 20)]);
    const deadline = Date.now() + WAIT_MS;
    while (!logLines.slice(before).some((line) => /aborted/.test(line.msg)) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const lines = logLines.slice(before);
    expect(lines.some((line) => /aborted/.test(line.msg) && line.level <= 30)).toBe(true);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});

async function exchangeThenClose(parts: string[]): Promise<void> {
  const { hostname, port } = new URL(harness.running.url);
  const socket: Socket = await new Promise((resolve, reject) => {
    const opened = connect(Number(port), hostname, () => resolve(opened));
    opened.once('error', reject);
  });
  socket.on('error', () => undefined);
  for (const part of parts) socket.write(part);
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.destroy();
}
