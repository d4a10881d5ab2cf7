import express from 'express';
import { parseLossless } from '../../../src/contract/json.js';
import { referenceHostappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** E3 accepts a body without `order`. */
export function acceptsMissingOrder(): BrokenServer {
  const app = express().use(
    express.text({ type: '*/*' }),
    (req, res, next) => {
      if (req.method === 'POST' && req.path === '/create-order-payment' && !('order' in (parseLossless(req.body) as object))) {
        res.status(200).json({ order_payment_id: 'hop_without_order' });
        return;
      }
      next();
    },
    referenceHostappRouter(),
  );
  return { name: 'accepts a body without order', subject: 'hostapp', app, catches: ['negative createHostappOrderPayment'] };
}
