import { redeliver } from '../delivery/redelivery.js';
import type { OperationHandler } from './handler.js';

/** Admin: queue an E6 delivery for an attempt now, with a fresh 72-hour schedule (ADR 0008, 0038). */
export const redeliverDelivery: OperationHandler<'redeliverDelivery'> = {
  async handle({ params }, platform) {
    return { body: await redeliver(platform, { deliveryId: params.delivery_id, actor: { type: 'operator', id: null } }) };
  },
};
