import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { contractOperations, type OperationContract } from '../../contract/operations.js';
import { packageRoot } from '../../contract/documents.js';
import { handlers } from '../operations/index.js';
import type { PlatformContext } from '../context.js';
import { ApiError, invalidInputCode } from '../../contract/errors.js';
import { expressPath, mountOperations } from './operationRoutes.js';
import { requestLog, requestPath } from './requestLog.js';
import { serveFavicon } from './favicon.js';
import { sendError } from './respond.js';

/**
 * The platform's Express app: the contract's operations, the rendered docs at /docs, the partner
 * dashboard at /dashboard/, and contract-shaped JSON for everything else (unknown route 404,
 * wrong method 405), never HTML.
 */
/**
 * The server's request listener, and the Express app behind it, whose prototypes are the ones
 * requests are born with (ADR 0036).
 */
export type PlatformListener = ((req: IncomingMessage, res: ServerResponse) => void) & { app: express.Express };

export function createApp(platform: PlatformContext): PlatformListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', platform.config.trustProxy);
  const logRequest = requestLog(app, platform.log, (_req, res, milliseconds) => {
    const operation = String(res.locals.operationId ?? 'none');
    platform.metrics.requests.inc({ operation, status: String(res.statusCode) });
    platform.metrics.requestSeconds.observe({ operation }, milliseconds / 1000);
  });
  const router = express.Router({ strict: false });
  const fixedPathOperations = mountOperations(router, platform, handlers);
  // Every request is logged; then an operation on a fixed path (E1, E2, E5, the events) is
  // answered before Express (its final handler, its router's walk), which takes everything else.
  // Requests are born with the app's prototypes (ADR 0036), so req.ip, req.path and res.status
  // work the same on both ways (ADR 0045).
  const listener = Object.assign(
    (req: IncomingMessage, res: ServerResponse): void => {
      const request = req as Request;
      const response = res as Response;
      // Nothing above this listener catches: a throw here would end the process (Express's
      // router caught what the middleware before it threw).
      try {
        logRequest(request, response, () => {
          // A target that is no URL names no route: answered here, as Express's router cannot route it.
          if (requestPath(request) === undefined) {
            response.locals = Object.create(null) as Response['locals'];
            sendError(response, new ApiError('NOT_FOUND', `no route ${request.method} ${request.url}`), undefined, request.log);
            return;
          }
          fixedPathOperations(request, response, () => app(req, res));
        });
      } catch (error) {
        (response as { locals?: Response['locals'] }).locals ??= Object.create(null) as Response['locals'];
        sendError(response, error, undefined, platform.log);
      }
    },
    { app },
  );
  // Express answers OPTIONS itself with a text/plain list of methods; no operation documents
  // OPTIONS (partners call from servers, there is no CORS), so it falls through to the 405/404 below.
  app.use((req: Request, res: Response, next: NextFunction) => (req.method === 'OPTIONS' ? next() : router(req, res, next)));
  // The docs are served as the folder tree they are built in, so every relative link works over
  // HTTP as from file: generated/docs/ at /docs/, the bundles they offer for download
  // (../openapi/<api>.yaml|json) at /openapi/, and the guides' screenshots, linked as
  // ../../docs/screenshots/, which from /docs/ resolves to /docs/screenshots/.
  app.use('/docs', express.static(join(packageRoot(), 'generated', 'docs'), { index: 'index.html', fallthrough: true }));
  app.use(
    '/openapi',
    express.static(join(packageRoot(), 'generated', 'openapi'), { index: false, fallthrough: true, setHeaders: readableContract }),
  );
  app.use('/docs/screenshots', express.static(join(packageRoot(), 'docs', 'screenshots'), { fallthrough: true }));
  app.get('/favicon.ico', serveFavicon);
  // The partner dashboard: static pages that call the Dashboard API with the contract it reads
  // from /openapi/platform.json (ADR 0030).
  app.use(
    '/dashboard',
    express.static(join(packageRoot(), 'src', 'platform', 'dashboard', 'public'), {
      index: 'index.html',
      redirect: true,
      fallthrough: true,
      setHeaders: dashboardHeaders,
    }),
  );

  const knownPaths = [...contractOperations().values()]
    .filter((op) => op.api === 'platform')
    .map((op) => ({ op, method: op.method, pattern: pathPattern(op.path) }));
  app.use((req: Request, res: Response) => {
    const allowed = knownPaths.filter((known) => known.pattern.test(req.path)).map((known) => known.method);
    const error =
      allowed.length > 0
        ? new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}; use ${allowed.join(', ')}`, {
            Allow: allowed.join(', '),
          })
        : new ApiError('NOT_FOUND', `no route ${req.method} ${req.path}`);
    sendError(res, error, undefined, req.log);
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    // Express fails a route before the operation's handler runs (a path parameter that does not
    // decode): answered with that operation's invalid-input error, as its handler would.
    const op = knownPaths.find((known) => known.method === req.method && known.pattern.test(req.path))?.op;
    sendError(res, (op && clientFault(error, op)) ?? error, op, req.log);
  });
  return listener;
}

/**
 * The dashboard handles partners' secrets: its pages load nothing from elsewhere, run no inline
 * script, cannot be framed (clickjacking a rotate or revoke button), send no Referer, and are
 * revalidated on every load so a fixed page reaches every browser at once.
 */
function dashboardHeaders(res: Response): void {
  res.setHeader(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  );
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-cache');
}

/** Bundles open in the browser as text rather than downloading as an unknown type. */
function readableContract(res: Response, file: string): void {
  if (file.endsWith('.yaml')) res.setHeader('Content-Type', 'text/yaml; charset=utf-8');
}

/**
 * An error Express itself raises for the client's request before the operation's handler runs (a
 * path segment such as `%zz` or `%ED%A0%80` that is not percent-encoded UTF-8 fails its decoding
 * with status 400): the client's fault, answered with the operation's invalid-input error rather
 * than as a platform failure (UNKNOWN_ERROR, retryable, for something no retry can fix).
 */
function clientFault(error: unknown, op: OperationContract): ApiError | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  if (error instanceof ApiError || typeof status !== 'number' || status < 400 || status > 499) return undefined;
  const why = error instanceof URIError ? 'the request path is not percent-encoded UTF-8' : 'the request cannot be read';
  return new ApiError(invalidInputCode(op), why);
}

function pathPattern(template: string): RegExp {
  const source = expressPath(template)
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
    .replace(/\/$/, '');
  return new RegExp(`^${source}/?$`);
}
