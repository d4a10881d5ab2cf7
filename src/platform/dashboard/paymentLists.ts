import type { components } from '../../../generated/types/platform.js';
import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';
import type { PaymentQuery } from '../store/index.js';
import { cursorProblem, pageQuery } from './caller.js';

type PaymentStatus = components['schemas']['PaymentStatus'];

/** The filters every payment list takes, from a validated query (ADR 0039). */
export function paymentFilters(query: Record<string, string | undefined>): Omit<PaymentQuery, 'appId' | 'clientId'> {
  const instant = (name: string) => (query[name] === undefined ? undefined : new Date(query[name]));
  const createdFrom = instant('created_from');
  const createdTo = instant('created_to');
  if (createdFrom && createdTo && createdFrom >= createdTo) throw new ApiError('INVALID_REQUEST', 'created_from must be before created_to');
  return {
    ...pageQuery(query),
    status: query.status as PaymentStatus | undefined,
    stuck: query.stuck === undefined ? undefined : query.stuck === 'true',
    createdFrom,
    createdTo,
    miniappOrderId: query.miniapp_order_id,
    orderPaymentId: query.order_payment_id,
  };
}

/** Operators only (the operation's security says so): every partner's payments (ADR 0039). */
export async function listEveryPayment(platform: PlatformContext, query: Record<string, string | undefined>) {
  return platform.store.paymentRecords
    .list({ ...paymentFilters(query), appId: query.app_id, clientId: query.client_id })
    .catch(cursorProblem);
}
