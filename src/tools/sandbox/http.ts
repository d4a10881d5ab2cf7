import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { REPORT_LIMITS } from '../../../generated/sdk/bridge-conformance-contract.js';
import { maxJsonDepth, nestsDeeperThan, parseLossless, stringifyLossless } from '../../contract/json.js';
import type { PlatformAnswer } from './platformCalls.js';

export interface Listening {
  server: Server;
  /** The address the platform calls: a wildcard bind is reached on the loopback address. */
  url: string;
  close(): Promise<void>;
}

export async function listen(app: express.Express, port: number, host: string): Promise<Listening> {
  const server = await new Promise<Server>((resolve, reject) => {
    const started = app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(started)));
    started.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const reachable = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
  const url = `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${address.port}`;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      // The platform keeps connections alive; nothing is in flight once the platform stopped.
      server.closeAllConnections();
    }));
  return { server, url, close };
}

/**
 * The sandbox's own control routes (not part of the contract) are called from the browser
 * simulator, served from another origin, and from the bridge conformance page bundled with an
 * app (file:// or the app's own origin, which PUTs its report), so they allow any origin.
 */
export function allowAnyOrigin(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
  if (req.method === 'OPTIONS') {
    res.status(204).end();
    return;
  }
  next();
}

/**
 * Keeps control-route bodies as text, so jsonBodyOf can read them without losing digits. The
 * largest body a control route takes is a bridge conformance report: its `x-max-bytes` is the limit.
 */
export const textBody = express.text({ type: () => true, limit: REPORT_LIMITS.bytes });

/** A router for a simulated partner's control routes: open to any origin, bodies read by jsonBodyOf. */
export function controlRouter(): express.Router {
  return express.Router().use(allowAnyOrigin, textBody);
}

/** A simulated partner's server: its partner-kit router at the root, its control routes under /sandbox. */
export function partnerApp(partnerRouter: express.Router, control: express.Router): express.Express {
  control.use(controlErrors);
  const app = express();
  app.disable('x-powered-by');
  app.use(partnerRouter);
  app.use('/sandbox', control);
  return app;
}

/** A control route that makes one platform call from its JSON body and answers with the platform's status and body. */
export function relayToPlatform(
  call: (body: Record<string, unknown>) => Promise<PlatformAnswer>,
): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    const answer = await call(jsonBodyOf(req));
    sendJson(res, answer.status, answer.body);
  };
}

/** An optional JSON object body, read without losing digits; {} when there is none. */
export function jsonBodyOf(req: Request): Record<string, unknown> {
  const text = typeof req.body === 'string' ? req.body.trim() : '';
  if (text === '') return {};
  // The lossless reader and the report's schema check walk recursively: a 20 kB body of `[[[[`
  // would exhaust the stack (a 500) long before the size limit. The contract's depth bounds it.
  if (nestsDeeperThan(text)) throw new SandboxRequestError(`objects and arrays must not be nested more than ${maxJsonDepth()} deep`);
  const value = parseLossless(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new SandboxRequestError('the body must be a JSON object');
  return value as Record<string, unknown>;
}

/** A mistake in a call to a sandbox control route: answered 400 with the message. */
export class SandboxRequestError extends Error {
  constructor(
    message: string,
    readonly status = 400,
    readonly code = 'INVALID_REQUEST',
  ) {
    super(message);
  }
}

export function sendJson(res: Response, status: number, value: unknown): void {
  res.status(status).type('application/json').send(stringifyLossless(value));
}

/** Express error handler for the control routes: JSON, never HTML. */
export function controlErrors(error: unknown, _req: Request, res: Response, _next: NextFunction): void {
  if (error instanceof SandboxRequestError) {
    sendJson(res, error.status, { error_code: error.code, error_message: error.message });
    return;
  }
  // The body reader's own refusals (413 past the limit, 415, 400) keep their status.
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500 && (error as { expose?: unknown }).expose === true) {
    sendJson(res, status, {
      error_code: status === 413 ? 'PAYLOAD_TOO_LARGE' : 'INVALID_REQUEST',
      error_message: String((error as Error).message),
    });
    return;
  }
  const message =
    error instanceof SyntaxError ? `the body is not valid JSON: ${error.message}` : String((error as Error)?.message ?? error);
  sendJson(res, error instanceof SyntaxError ? 400 : 500, {
    error_code: error instanceof SyntaxError ? 'INVALID_REQUEST' : 'UNKNOWN_ERROR',
    error_message: message,
  });
}
