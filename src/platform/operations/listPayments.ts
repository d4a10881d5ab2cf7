import { listEveryPayment } from '../dashboard/paymentLists.js';
import type { OperationHandler } from './handler.js';

/** Dashboard (operators): every partner's payments, newest first, filtered (ADR 0039). */
export const listPayments: OperationHandler<'listPayments'> = {
  async handle({ query }, platform) {
    return { body: await listEveryPayment(platform, query) };
  },
};
