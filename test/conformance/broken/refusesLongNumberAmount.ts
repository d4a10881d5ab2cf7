import express from 'express';
import { isLosslessNumber, parseLossless } from '../../../src/contract/json.js';
import { referenceHostappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** E3 refuses an amount written as a 20-digit JSON number (as a float-parsing server would). */
export function refusesLongNumberAmount(): BrokenServer {
  const app = express().use(
    express.text({ type: '*/*' }),
    (req, res, next) => {
      if (req.method === 'POST' && req.path === '/create-order-payment') {
        const amount = (parseLossless(req.body) as { order?: { amount?: unknown } }).order?.amount;
        if (isLosslessNumber(amount) && amount.value.replace(/\D/g, '').length >= 20) {
          res.status(200).json({ error_code: 'INVALID_ORDER_DATA' });
          return;
        }
      }
      next();
    },
    referenceHostappRouter(),
  );
  return { name: 'refuses a 20-digit number amount', subject: 'hostapp', app, catches: ['positive createHostappOrderPayment'] };
}
