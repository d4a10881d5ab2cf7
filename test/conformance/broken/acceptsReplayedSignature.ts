import express from 'express';
import { referenceMiniappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

const SECRETS = ['conformance-signing-secret'];

/**
 * Verifies every signature and its timestamp, but remembers none: a request accepted once is
 * accepted again, byte for byte (each request meets a router with an empty replay cache; the
 * reference miniapp's answers do not depend on what it saw before).
 */
export function acceptsReplayedSignature(): BrokenServer {
  const app = express().use((req, res, next) => referenceMiniappRouter({ signingSecrets: SECRETS })(req, res, next));
  return {
    name: 'accepts a replayed signature (no replay check)',
    subject: 'miniapp',
    app,
    signingSecrets: SECRETS,
    catches: ['replay receiveOrderCompletion', 'replay receiveMiniappEvent'],
  };
}
