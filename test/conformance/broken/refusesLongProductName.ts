import express from 'express';
import { parseLossless } from '../../../src/contract/json.js';
import { referenceHostappRouter } from '../reference.js';
import { type BrokenServer } from './brokenServer.js';

/** E3 refuses an item whose product_name uses all 250 characters the contract allows. */
export function refusesLongProductName(): BrokenServer {
  const reference = referenceHostappRouter();
  const app = express().use(
    express.text({ type: '*/*' }),
    (req, res, next) => {
      const items =
        req.method === 'POST' && req.path === '/create-order-payment'
          ? (parseLossless(req.body) as { order?: { items?: unknown } }).order?.items
          : undefined;
      if (Array.isArray(items) && items.some((item) => typeof item?.product_name === 'string' && item.product_name.length >= 250)) {
        res.status(200).json({ error_code: 'INVALID_ORDER_DATA' });
        return;
      }
      next();
    },
    reference,
  );
  return { name: 'refuses a 250-character product_name', subject: 'hostapp', app, catches: ['positive createHostappOrderPayment'] };
}
