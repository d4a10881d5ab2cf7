import { randomUUID } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

declare module 'express-serve-static-core' {
  interface Request {
    /** The request's id: the caller's X-Request-Id when it is a plain token, otherwise a new UUID. */
    id: string;
    /** A logger whose lines carry the request's id, made on first use: most requests never log. */
    log: Logger;
  }
}

const GIVEN_ID = /^[\w.:-]{1,128}$/;
const UNLOGGED = new Set(['/healthz', '/readyz', '/metrics']);
const childLog = Symbol('childLog');

/**
 * The request's path, or undefined when its target is no URL: Node's parser takes an absolute
 * form such as `http://[/`, which `req.path` (url.parse) throws on. Express's router catches
 * that; the server's listener, which runs before Express (ADR 0045), must too.
 */
export function requestPath(req: Request): string | undefined {
  try {
    return req.path;
  } catch {
    return undefined;
  }
}

/** Told of every answered request, logged or not: the platform's request metrics. */
export type RequestFinished = (req: Request, res: Response, milliseconds: number) => void;

/**
 * Gives every request an id, echoed as X-Request-Id, and a logger bound to it; at `info` (the
 * default) one line per request when its answer is sent, probes and metrics left out. Replaces
 * pino-http, which made a child logger and serialisers per request even when nothing was logged.
 * `finished` hears of every answered request from the same listener, so the metrics cost no
 * middleware of their own (each one is a walk through Express's router per request).
 */
export function requestLog(app: Express, log: Logger, finished?: RequestFinished) {
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Request & { [childLog]?: Logger }): Logger {
      return (this[childLog] ??= log.child({ req_id: this.id }));
    },
  });
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && GIVEN_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    const logged = log.isLevelEnabled('info') && !UNLOGGED.has(requestPath(req) ?? '');
    // The URL as it arrived (Express's originalUrl; a request answered before Express has none).
    const url = req.url;
    if (logged || finished) {
      const started = performance.now();
      res.on('finish', () => {
        const milliseconds = performance.now() - started;
        try {
          finished?.(req, res, milliseconds);
        } catch (error) {
          // The answer is sent; a metrics failure must not become an uncaught exception.
          req.log.error({ err: error }, 'could not record the request in the metrics');
        }
        if (logged)
          req.log.info(
            {
              req: { method: req.method, url },
              res: { statusCode: res.statusCode },
              responseTime: Math.round(milliseconds),
              operation: res.locals.operationId,
            },
            'request completed',
          );
      });
    }
    next();
  };
}
