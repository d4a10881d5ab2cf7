import express from 'express';
import { prefixedAuthorization } from '../../../src/wire/authorization.js';
import { HOSTAPP, referenceHostappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** Serves any request that carries some Authorization, right or wrong. */
export function acceptsWrongAuthorization(): BrokenServer {
  const app = express().use((req, _res, next) => {
    if (req.headers.authorization) req.headers.authorization = prefixedAuthorization('Token', HOSTAPP.id, HOSTAPP.secret);
    next();
  }, referenceHostappRouter());
  return {
    name: 'accepts a wrong Authorization',
    subject: 'hostapp',
    app,
    catches: ['auth createHostappOrderPayment', 'auth getHostappPaymentStatus', 'auth receiveHostappEvent'],
  };
}
