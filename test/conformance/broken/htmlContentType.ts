import express from 'express';
import { referenceHostappRouter } from '../reference.js';
import { type BrokenServer, rewriteResponses } from './brokenServer.js';

/** Labels its JSON answers text/html. */
export function htmlContentType(): BrokenServer {
  const app = express().use(
    rewriteResponses((_req, res) => {
      const type = res.type.bind(res);
      res.type = () => type('text/html');
    }),
    referenceHostappRouter(),
  );
  return {
    name: 'text/html content type',
    subject: 'hostapp',
    app,
    catches: ['content-type createHostappOrderPayment', 'content-type getHostappPaymentStatus', 'content-type receiveHostappEvent'],
  };
}
