import { completeOrder } from './completeOrder.js';
import { createOrderPayment } from './createOrderPayment.js';
import { getDelivery } from './getDelivery.js';
import { getHealth } from './getHealth.js';
import { getMetrics } from './getMetrics.js';
import { getPaymentStatus } from './getPaymentStatus.js';
import { getReadiness } from './getReadiness.js';
import type { HandlerTable } from './handler.js';
import { listDeliveries } from './listDeliveries.js';
import { redeliverDelivery } from './redeliverDelivery.js';
import { sendHostappEvent } from './sendHostappEvent.js';
import { sendMiniappEvent } from './sendMiniappEvent.js';

/** Every platform operation's handler, by operationId: the compiler checks none is missing. */
export const handlers: HandlerTable = {
  createOrderPayment,
  getPaymentStatus,
  completeOrder,
  sendHostappEvent,
  sendMiniappEvent,
  listDeliveries,
  getDelivery,
  redeliverDelivery,
  getHealth,
  getReadiness,
  getMetrics,
};
