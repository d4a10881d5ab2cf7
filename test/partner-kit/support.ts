import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type Router } from 'express';
import { afterEach } from 'vitest';
import { parseLossless } from '../../src/contract/json.js';
import type { PartnerKitLogger } from '../../src/shipped/partner-kit/index.js';

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Serves a partner-kit router on an ephemeral port. */
export async function serve(router: Router): Promise<Served> {
  const app = express();
  app.use(router);
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Serves routers that are closed when the test that served them ends; resolves to the base URL. */
export function servePerTest(): (router: Router) => Promise<string> {
  const open: Served[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((served) => served.close()));
  });
  return async (router) => {
    const served = await serve(router);
    open.push(served);
    return served.url;
  };
}

export interface Answer {
  status: number;
  contentType: string | null;
  text: string;
  body: Record<string, unknown>;
}

export async function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: init.method ?? 'POST',
    headers: { ...(init.body !== undefined && { 'content-type': 'application/json' }), ...init.headers },
    body: init.body,
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    text,
    body: parseLossless(text) as Record<string, unknown>,
  };
}

/** A logger that keeps what it was told, so tests can see the log line a failure leaves. */
export function recordingLogger(): PartnerKitLogger & { lines: Array<{ level: string; message: string; details: object }> } {
  const lines: Array<{ level: string; message: string; details: object }> = [];
  return {
    lines,
    warn: (details, message) => lines.push({ level: 'warn', message, details }),
    error: (details, message) => lines.push({ level: 'error', message, details }),
  };
}
