import express from 'express';
import { referenceMiniappRouter } from '../reference.js';
import { type BrokenServer, rewriteResponses } from './brokenServer.js';

/** Answers HTTP 400 instead of 200 (with the right bodies) everywhere. */
export function answers400(): BrokenServer {
  const app = express().use(
    rewriteResponses((_req, res) => {
      const status = res.status.bind(res);
      res.status = () => status(400);
    }),
    referenceMiniappRouter(),
  );
  return {
    name: 'answers 400 instead of 200',
    subject: 'miniapp',
    app,
    catches: ['status receiveOrderCompletion', 'status receiveMiniappEvent'],
  };
}
