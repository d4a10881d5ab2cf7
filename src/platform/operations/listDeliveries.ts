import { ApiError } from '../../contract/errors.js';
import { pageSize } from '../../contract/limits.js';
import { InvalidCursorError } from '../store/index.js';
import type { OperationHandler } from './handler.js';

/** Admin: a page of E6 deliveries, newest first. */
export const listDeliveries: OperationHandler<'listDeliveries'> = {
  async handle({ query }, platform) {
    try {
      const page = await platform.store.outbox.list({
        status: query.status as 'pending' | 'delivered' | 'dead' | undefined,
        orderPaymentId: query.order_payment_id,
        // The validator has held `limit` to the parameter's maximum; absent, it is the parameter's default.
        limit: query.limit === undefined ? pageSize().default : Number(query.limit),
        cursor: query.cursor,
      });
      return { body: page };
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new ApiError('INVALID_REQUEST', 'cursor is not one this API produced');
      throw error;
    }
  },
};
