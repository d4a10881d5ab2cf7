import express from 'express';
import { parseLossless } from '../../../src/contract/json.js';
import { referenceHostappRouter } from '../reference.js';
import { type BrokenServer, rewriteResponses } from './brokenServer.js';

/** E3 answers success without order_payment_id (and without error_code). */
export function missingOrderPaymentId(): BrokenServer {
  const app = express().use(
    rewriteResponses((req, res) => {
      if (req.path !== '/create-order-payment') return;
      const send = res.send.bind(res);
      res.send = (body: unknown) => {
        const answer = parseLossless(String(body)) as Record<string, unknown>;
        delete answer.order_payment_id;
        if (Object.keys(answer).length === 0) answer.custom_attributes = {};
        return send(JSON.stringify(answer));
      };
    }),
    referenceHostappRouter(),
  );
  return { name: 'E3 body without order_payment_id or error_code', subject: 'hostapp', app, catches: ['schema createHostappOrderPayment'] };
}
