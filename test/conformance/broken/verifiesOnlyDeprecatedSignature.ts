import express from 'express';
import { referenceMiniappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/**
 * Verifies only the deprecated X-Minibridge-Signature: the webhook-* headers never reach its
 * verifier, so a request whose Standard Webhooks signature is wrong is served (and after the
 * sunset, when the platform sends only webhook-*, every request would be refused).
 */
export function verifiesOnlyDeprecatedSignature(): BrokenServer {
  const app = express()
    .use((req, _res, next) => {
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) delete req.headers[name];
      next();
    })
    .use(referenceMiniappRouter({ signingSecrets: ['conformance-signing-secret'] }));
  return {
    name: 'verifies only the deprecated X-Minibridge-Signature',
    subject: 'miniapp',
    app,
    signingSecrets: ['conformance-signing-secret'],
    catches: ['auth receiveOrderCompletion', 'auth receiveMiniappEvent'],
  };
}
