import express from 'express';
import { referenceMiniappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** Ignores signatures although the partner enabled signing. */
export function ignoresSignatures(): BrokenServer {
  const app = express().use(referenceMiniappRouter());
  return {
    name: 'accepts a bad signature',
    subject: 'miniapp',
    app,
    signingSecrets: ['conformance-signing-secret'],
    // Ignoring signatures, it also takes a stale one and a replayed one.
    catches: [
      'auth receiveOrderCompletion',
      'auth receiveMiniappEvent',
      'stale-timestamp receiveOrderCompletion',
      'stale-timestamp receiveMiniappEvent',
      'replay receiveOrderCompletion',
      'replay receiveMiniappEvent',
    ],
  };
}
