import path from 'node:path';
import express, { Router, type Response } from 'express';
import { packageRoot } from '../../contract/documents.js';

/**
 * The host-app simulator: a page that embeds a miniapp in an iframe and plays the host app's
 * side of the bridge (generated/sdk/minibridge-host.js): it shows a payment sheet for `pay`,
 * asks its own host app server to confirm, cancel or fail the payment (the sandbox's
 * `POST /sandbox/payments/{order_payment_id}/confirm|cancel|fail`, which sends E5), sends the
 * result back, and lists the custom events the miniapp sends.
 *
 * Mount it at `/simulator` on the sandbox host app server: the page calls `/sandbox/...` on its
 * own origin. Open `/simulator/?miniapp=<miniapp page URL>`; without `miniapp`, the page opens
 * `defaultMiniappUrl()` when there is one (the sandbox's demo miniapp).
 */
export function simulatorRouter(options: { defaultMiniappUrl?: () => string | undefined } = {}): Router {
  const root = packageRoot();
  const router = Router();
  router.use(noExternalResources);
  router.get('/', (req, res, next) => {
    const miniapp = options.defaultMiniappUrl?.();
    if (req.query.miniapp !== undefined || miniapp === undefined) return next();
    res.redirect(302, `${req.baseUrl}/?${new URLSearchParams({ miniapp })}`);
  });
  router.get('/minibridge-host.js', (_req, res) =>
    res.type('text/javascript').sendFile(path.join(root, 'generated', 'sdk', 'minibridge-host.js')),
  );
  router.use(express.static(path.join(root, 'src', 'tools', 'simulator', 'public'), { index: 'index.html', redirect: true }));
  return router;
}

/** Everything comes from the simulator itself; only the embedded miniapp may live elsewhere. */
function noExternalResources(_req: unknown, res: Response, next: () => void): void {
  res.setHeader(
    'Content-Security-Policy',
    "default-src 'self'; frame-src http: https:; img-src 'self' data:; base-uri 'none'; form-action 'self'",
  );
  next();
}
