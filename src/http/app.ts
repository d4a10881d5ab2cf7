import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import { contractOperations } from '../contract/operations.js';
import { packageRoot } from '../contract/documents.js';
import { handlers } from '../operations/index.js';
import type { Platform } from '../platform.js';
import { ApiError } from './apiError.js';
import { expressPath, mountOperations } from './operationRoutes.js';
import { sendError } from './respond.js';

/**
 * The platform's Express app: the contract's operations, the rendered docs at /docs, and
 * contract-shaped JSON for everything else (unknown route 404, wrong method 405), never HTML.
 */
export function createApp(platform: Platform): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', platform.config.trustProxy);
  app.use(
    pinoHttp({
      logger: platform.log,
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customProps: (_req, res) => ({ operation: res.locals.operationId }),
      autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' || req.url === '/metrics' },
    }),
  );
  app.use((req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    res.on('finish', () => {
      const operation = String(res.locals.operationId ?? 'none');
      platform.metrics.requests.inc({ operation, status: String(res.statusCode) });
      platform.metrics.requestSeconds.observe({ operation }, (performance.now() - started) / 1000);
    });
    next();
  });

  const router = express.Router({ strict: false });
  mountOperations(router, platform, handlers);
  app.use(router);
  // The docs are served as the folder tree they are built in, so every relative link works over
  // HTTP as from file: generated/docs/ at /docs/, the bundles they offer for download
  // (../openapi/<api>.yaml|json) at /openapi/, and the guides' screenshots, linked as
  // ../../docs/screenshots/, which from /docs/ resolves to /docs/screenshots/.
  app.use('/docs', express.static(join(packageRoot(), 'generated', 'docs'), { index: 'index.html', fallthrough: true }));
  app.use('/openapi', express.static(join(packageRoot(), 'generated', 'openapi'), { index: false, fallthrough: true, setHeaders: readableContract }));
  app.use('/docs/screenshots', express.static(join(packageRoot(), 'docs', 'screenshots'), { fallthrough: true }));

  const knownPaths = [...contractOperations().values()].filter((op) => op.api === 'platform').map((op) => ({ method: op.method, pattern: pathPattern(op.path) }));
  app.use((req: Request, res: Response) => {
    const allowed = knownPaths.filter((known) => known.pattern.test(req.path)).map((known) => known.method);
    const error = allowed.length > 0
      ? new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}; use ${allowed.join(', ')}`, { Allow: allowed.join(', ') })
      : new ApiError('NOT_FOUND', `no route ${req.method} ${req.path}`);
    sendError(res, error, undefined, req.log);
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    sendError(res, error, undefined, req.log);
  });
  return app;
}

/** Bundles open in the browser as text rather than downloading as an unknown type. */
function readableContract(res: Response, file: string): void {
  if (file.endsWith('.yaml')) res.setHeader('Content-Type', 'text/yaml; charset=utf-8');
}

function pathPattern(template: string): RegExp {
  const source = expressPath(template)
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
    .replace(/\/$/, '');
  return new RegExp(`^${source}/?$`);
}
