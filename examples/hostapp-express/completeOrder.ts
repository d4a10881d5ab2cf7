import { createPlatformClient } from '../../src/clients/index.js';
import { basicAuthorization } from '../../src/partner-kit/index.js';
import type { Payment } from './payments.js';

export type Outcome = 'paid' | 'cancelled' | 'failed';

/**
 * Tells Minibridge a payment's outcome (E5, completeOrder); Minibridge then tells the miniapp
 * server (E6). Repeating the same outcome is safe; a different outcome for a settled payment is
 * refused with PAYMENT_STATUS_CONFLICT.
 */
export async function reportOutcome(platformUrl: string, credentials: { clientId: string; secretKey: string }, payment: Payment, outcome: Outcome, failReason?: string) {
  const platform = createPlatformClient({ baseUrl: platformUrl, headers: { Authorization: basicAuthorization(credentials.clientId, credentials.secretKey) } });
  const { data, error } = await platform.POST('/api/v1/orders/complete-order/', {
    body: {
      order_payment_id: payment.orderPaymentId,
      app_id: payment.appId,
      client_id: credentials.clientId,
      payment_status: outcome,
      ...(outcome === 'failed' && failReason ? { payment_fail_reason: failReason } : {}),
    },
  });
  if (error) throw new Error(`completeOrder refused: ${error.error_code} ${error.error_message}`);
  payment.status = outcome;
  return data;
}
