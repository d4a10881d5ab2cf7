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
 * Gives every request an id, echoed as X-Request-Id, and a logger bound to it; at `info` (the
 * default) one line per request when its answer is sent, probes and metrics left out. Replaces
 * pino-http, which made a child logger and serialisers per request even when nothing was logged.
 */
export function requestLog(app: Express, log: Logger) {
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
    if (log.isLevelEnabled('info') && !UNLOGGED.has(req.path)) {
      const started = performance.now();
      res.on('finish', () =>
        req.log.info(
          {
            req: { method: req.method, url: req.originalUrl },
            res: { statusCode: res.statusCode },
            responseTime: Math.round(performance.now() - started),
            operation: res.locals.operationId,
          },
          'request completed',
        ),
      );
    }
    next();
  };
}
