import type { operations } from '../../../generated/types/platform.js';
import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';
import { storableInstant, type PaymentQuery } from '../store/index.js';
import { cursorProblem, pageQuery } from './caller.js';

/** The query a payment list takes, as the contract types it (the partner's list has no app_id or client_id). */
export type PaymentListQuery = NonNullable<operations['listPayments']['parameters']['query']>;

/** The filters every payment list takes, from a validated query (ADR 0039). */
export function paymentFilters(query: PaymentListQuery): Omit<PaymentQuery, 'appId' | 'clientId'> {
  const instant = (text: string | undefined) => {
    if (text === undefined) return undefined;
    const parsed = storableInstant(text);
    if (!parsed) throw new ApiError('INVALID_REQUEST', `${text} is not an instant the platform keeps (years 0001-9999, no leap second)`);
    return parsed;
  };
  const createdFrom = instant(query.created_from);
  const createdTo = instant(query.created_to);
  if (createdFrom && createdTo && createdFrom >= createdTo) throw new ApiError('INVALID_REQUEST', 'created_from must be before created_to');
  return {
    ...pageQuery(query),
    status: query.status,
    stuck: query.stuck,
    createdFrom,
    createdTo,
    miniappOrderId: query.miniapp_order_id,
    orderPaymentId: query.order_payment_id,
  };
}

/** Operators only (the operation's security says so): every partner's payments (ADR 0039). */
export async function listEveryPayment(platform: PlatformContext, query: PaymentListQuery) {
  return platform.store.paymentRecords
    .list({ ...paymentFilters(query), appId: query.app_id, clientId: query.client_id })
    .catch(cursorProblem);
}
