import { ApiError } from '../../contract/errors.js';
import type { OperationHandler } from './handler.js';

/** Admin: queue an E6 delivery for an attempt now, with a fresh 72-hour schedule. */
export const redeliverDelivery: OperationHandler<'redeliverDelivery'> = {
  async handle({ params, log }, platform) {
    const delivery = await platform.store.outbox.requeue(params.delivery_id);
    if (!delivery) throw new ApiError('NOT_FOUND', `no delivery ${params.delivery_id}`);
    log.info({ delivery_id: delivery.delivery_id, event_id: delivery.event_id }, 'delivery requeued by an operator');
    platform.wakeWorker();
    return { body: delivery };
  },
};
