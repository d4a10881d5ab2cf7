import { completeOrder } from './completeOrder.js';
import { createOrderPayment } from './createOrderPayment.js';
import { getDelivery } from './getDelivery.js';
import { getHealth } from './getHealth.js';
import { getMetrics } from './getMetrics.js';
import { getPaymentStatus } from './getPaymentStatus.js';
import { getReadiness } from './getReadiness.js';
import type { HandlerTable } from './handler.js';
import { listHostapps } from './listHostapps.js';
import { createHostapp } from './createHostapp.js';
import { getHostapp } from './getHostapp.js';
import { updateHostapp } from './updateHostapp.js';
import { listMiniapps } from './listMiniapps.js';
import { createMiniapp } from './createMiniapp.js';
import { getMiniapp } from './getMiniapp.js';
import { updateMiniapp } from './updateMiniapp.js';
import { listCredentials } from './listCredentials.js';
import { issueCredential } from './issueCredential.js';
import { revokeCredential } from './revokeCredential.js';
import { listPartnerDeliveries } from './listPartnerDeliveries.js';
import { redeliverPartnerDelivery } from './redeliverPartnerDelivery.js';
import { listAuditEntries } from './listAuditEntries.js';
import { listPartnerPayments } from './listPartnerPayments.js';
import { getPartnerPayment } from './getPartnerPayment.js';
import { listPayments } from './listPayments.js';
import { getPartnerStatement } from './getPartnerStatement.js';
import { downloadPartnerStatement } from './downloadPartnerStatement.js';
import { getRetentionPolicy } from './getRetentionPolicy.js';
import { eraseHostappUser } from './eraseHostappUser.js';
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
  listHostapps,
  createHostapp,
  getHostapp,
  updateHostapp,
  listMiniapps,
  createMiniapp,
  getMiniapp,
  updateMiniapp,
  listCredentials,
  issueCredential,
  revokeCredential,
  listPartnerDeliveries,
  redeliverPartnerDelivery,
  listAuditEntries,
  listPartnerPayments,
  getPartnerPayment,
  listPayments,
  getPartnerStatement,
  downloadPartnerStatement,
  getRetentionPolicy,
  eraseHostappUser,
};
