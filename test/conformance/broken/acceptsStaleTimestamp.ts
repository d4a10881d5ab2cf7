import express from 'express';
import { signatureInput, verifyRequest } from '../../../src/wire/signing.js';
import { referenceMiniappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

const SECRETS = ['conformance-signing-secret'];

/**
 * Verifies every signature and refuses replays, but judges each request at the time it claims
 * (its own signed timestamp): there is no window, so a request signed long ago is accepted.
 */
export function acceptsStaleTimestamp(): BrokenServer {
  const seen = new Set<string>();
  const app = express()
    .use(express.raw({ type: () => true }))
    .use((req, res, next) => {
      const input = signatureInput((name) => req.get(name));
      const claimed = Number(input.webhookTimestamp ?? input.legacyTimestamp);
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const verification = verifyRequest(raw, input, SECRETS, Number.isFinite(claimed) ? claimed : 0);
      const replayed = verification.ok && verification.replayKeys.some((key) => seen.has(key.digest));
      if (!verification.ok || replayed) {
        res.status(200).json({ error_code: 'UNAUTHORIZED', error_message: replayed ? 'replayed signature' : 'bad signature' });
        return;
      }
      for (const key of verification.replayKeys) seen.add(key.digest);
      next();
    })
    // The signature was checked above, so the reference router verifies nothing itself.
    .use(referenceMiniappRouter());
  return {
    name: 'accepts a stale timestamp (no replay window)',
    subject: 'miniapp',
    app,
    signingSecrets: SECRETS,
    catches: ['stale-timestamp receiveOrderCompletion', 'stale-timestamp receiveMiniappEvent'],
  };
}
