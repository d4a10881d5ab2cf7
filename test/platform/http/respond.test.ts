/**
 * An error raised after an answer was written in full leaves the connection alone: the client
 * may already have sent its next request on it (keep-alive), which must still be answered.
 */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Response } from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sendError } from '../../../src/platform/http/respond.js';

const silent = pino({ level: 'silent' });
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    const answer = JSON.stringify({ path: req.url });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
    // Straight after end(), while the answer may still be flushing: a step after the answer fails.
    // The plain ServerResponse carries everything sendError reads once headers are sent.
    if (req.url === '/late-failure') sendError(res as unknown as Response, new Error('failed after the answer'), undefined, silent);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('a failure after a complete answer keeps the keep-alive connection for the next request', async () => {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const waitFor = async (text: string) => {
    for (let i = 0; i < 200 && !received.includes(text); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  socket.write('GET /late-failure HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await waitFor('{"path":"/late-failure"}');
  // Let the late failure run before the next request goes out on the same connection.
  await new Promise((resolve) => setTimeout(resolve, 50));
  socket.write('GET /next HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  expect(received).toContain('{"path":"/late-failure"}');
  expect(received).toContain('{"path":"/next"}');
  socket.destroy();
});
