import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';
import { accessible } from './access.js';
import { cursorProblem, type DashboardCaller } from './caller.js';
import { paymentFilters, type PaymentListQuery } from './paymentLists.js';
import { kindOf, type PartnerType } from './settings.js';

/** A partner's payments and their timelines: a miniapp's are those it created, a host app's those made with it. */
export const paymentReads = {
  async listPartnerPayments(
    platform: PlatformContext,
    caller: DashboardCaller,
    type: PartnerType,
    id: string,
    query: Omit<PaymentListQuery, 'app_id' | 'client_id'>,
  ) {
    const kind = kindOf(type);
    await accessible(platform, caller, kind, id);
    return platform.store.paymentRecords
      .list({ ...paymentFilters(query), ...(kind === 'miniapp' ? { appId: id } : { clientId: id }) })
      .catch(cursorProblem);
  },

  async getPartnerPayment(
    platform: PlatformContext,
    caller: DashboardCaller,
    type: PartnerType,
    id: string,
    clientId: string,
    orderPaymentId: string,
  ) {
    const kind = kindOf(type);
    await accessible(platform, caller, kind, id);
    const payment = await platform.store.paymentRecords.get({ client_id: clientId, order_payment_id: orderPaymentId });
    // Another partner's payment is answered as missing, like any other partner's resource (ADR 0027).
    const owned = payment && (kind === 'miniapp' ? payment.app_id === id : payment.client_id === id);
    if (!payment || !owned) throw new ApiError('NOT_FOUND', `no payment ${orderPaymentId} of host app ${clientId} for ${id}`);
    return payment;
  },
};
