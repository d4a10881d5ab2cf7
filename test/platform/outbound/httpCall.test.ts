import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { AnswerTooLargeError, httpCall } from '../../../src/platform/outbound/httpCall.js';

/**
 * httpCall on undici's dispatcher (ADR 0035) against a raw TCP server that answers whatever bytes
 * a test gives it: the failure shapes partnerCall classifies must be the ones it had on node:http.
 */
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function rawServer(onRequest: (socket: Socket) => void): Promise<URL> {
  const server = createServer((socket) => {
    let seen = '';
    socket.on('data', (chunk) => {
      seen += chunk.toString('latin1');
      // The request is complete once its headers and its (small, declared) body have arrived.
      const headerEnd = seen.indexOf('\r\n\r\n');
      const length = Number(/content-length: *(\d+)/i.exec(seen)?.[1] ?? 0);
      if (headerEnd >= 0 && seen.length >= headerEnd + 4 + length) {
        seen = '';
        onRequest(socket);
      }
    });
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return new URL(`http://127.0.0.1:${address.port}/create-order-payment`);
}

const call = (url: URL, overrides: Partial<Parameters<typeof httpCall>[1]> = {}) =>
  httpCall(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a":1}',
    timeoutMs: 2_000,
    maxAnswerBytes: 64,
    // These servers listen on loopback, as an operator's registration may (ADR 0038).
    reach: 'operator-approved',
    ...overrides,
  });

const caught = async (promise: Promise<unknown>): Promise<Error & { cause?: { code?: string } }> => {
  try {
    await promise;
  } catch (error) {
    return error as Error & { cause?: { code?: string } };
  }
  throw new Error('expected the call to fail');
};

describe('httpCall (undici dispatcher)', () => {
  test('a complete answer comes back whole, a chunked one too', async () => {
    const plain = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n{"a":1}'));
    expect(await call(plain)).toEqual({ status: 200, body: Buffer.from('{"a":1}') });
    const chunked = await rawServer((socket) =>
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n'),
    );
    expect((await call(chunked)).body.toString()).toBe('{"a":1}');
  });

  test('a connection closed before any answer is ECONNRESET, as on node:http', async () => {
    const url = await rawServer((socket) => socket.destroy());
    const error = await caught(call(url));
    expect(error.message).toBe('the connection closed before the answer');
    expect(error.cause?.code).toBe('ECONNRESET');
  });

  test('a connection cut during the answer is ECONNRESET', async () => {
    const url = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{"a":'));
    const error = await caught(call(url));
    expect(error.message).toBe('the connection closed during the answer');
    expect(error.cause?.code).toBe('ECONNRESET');
  });

  test('a refused connection carries its cause', async () => {
    const url = await rawServer(() => undefined);
    await new Promise((resolve) => servers.pop()!.close(resolve));
    expect((await caught(call(url))).cause?.code).toBe('ECONNREFUSED');
  });

  test('the time-out covers a body that trickles in: a TimeoutError', async () => {
    const url = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{');
      const drip = setInterval(() => socket.writable && socket.write(' '), 50);
      socket.on('close', () => clearInterval(drip));
    });
    const error = await caught(call(url, { timeoutMs: 300 }));
    expect(error.name).toBe('TimeoutError');
  });

  test('an answer past the cap is refused, announced or counted', async () => {
    const announced = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n'));
    expect(await caught(call(announced))).toBeInstanceOf(AnswerTooLargeError);
    const counted = await rawServer((socket) =>
      socket.write(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n50\r\n${'x'.repeat(80)}\r\n0\r\n\r\n`),
    );
    const error = await caught(call(counted));
    expect(error).toBeInstanceOf(AnswerTooLargeError);
    expect((error as AnswerTooLargeError).status).toBe(200);
  });

  test('a redirect is returned as it is, never followed', async () => {
    const url = await rawServer((socket) =>
      socket.write('HTTP/1.1 302 Found\r\nlocation: http://169.254.169.254/\r\ncontent-length: 0\r\n\r\n'),
    );
    expect((await call(url)).status).toBe(302);
  });
});
