import express from 'express';
import { referenceHostappRouter } from '../reference.js';
import { type BrokenServer, rewriteResponses } from './brokenServer.js';

/** Answers HTTP 500 to the first request only (with the body a correct server gives). */
export function answers500Once(): BrokenServer {
  let first = true;
  const app = express().use(
    rewriteResponses((_req, res) => {
      if (!first) return;
      first = false;
      const status = res.status.bind(res);
      res.status = () => status(500);
    }),
    referenceHostappRouter(),
  );
  return { name: 'answers 500 once', subject: 'hostapp', app, catches: ['status createHostappOrderPayment'] };
}
