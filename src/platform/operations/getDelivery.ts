import { ApiError } from '../../contract/errors.js';
import type { OperationHandler } from './handler.js';

/** Admin: one E6 delivery with all its attempts. */
export const getDelivery: OperationHandler<'getDelivery'> = {
  async handle({ params }, platform) {
    const delivery = await platform.store.outbox.get(params.delivery_id);
    if (!delivery) throw new ApiError('NOT_FOUND', `no delivery ${params.delivery_id}`);
    return { body: delivery };
  },
};
