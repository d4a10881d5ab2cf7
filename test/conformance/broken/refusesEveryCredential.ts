import express from 'express';
import { referenceHostappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** Configured with another secret key than the one the kit is given: every request is UNAUTHORIZED. */
export function refusesEveryCredential(): BrokenServer {
  const app = express().use(referenceHostappRouter({ secretKey: 'a-secret-the-kit-was-not-given' }));
  return {
    name: 'refuses every credential',
    subject: 'hostapp',
    app,
    catches: [],
    stops:
      /refused the credentials on every operation asked \(E3 createHostappOrderPayment, E7 receiveHostappEvent: error_code UNAUTHORIZED\)\.\nNothing else was checked\. Check --credentials/,
  };
}
