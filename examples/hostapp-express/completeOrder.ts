import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { createPlatformClient } from '../../src/shipped/clients/index.js';
import { basicAuthorization, standardSecret } from '../../src/shipped/partner-kit/index.js';
import type { Payment } from './payments.js';

export type Outcome = 'paid' | 'cancelled' | 'failed';

/**
 * Tells Minibridge a payment's outcome (E5, completeOrder); Minibridge then tells the miniapp
 * server (E6). Repeating the same outcome is safe; a different outcome for a settled payment is
 * refused with PAYMENT_STATUS_CONFLICT.
 */
export async function reportOutcome(
  platformUrl: string,
  credentials: { clientId: string; secretKey: string; signingSecrets?: string[] },
  payment: Payment,
  outcome: Outcome,
  failReason?: string,
) {
  const signingSecrets = credentials.signingSecrets ?? [];
  const platform = createPlatformClient({
    baseUrl: platformUrl,
    headers: { Authorization: basicAuthorization(credentials.clientId, credentials.secretKey) },
    ...(signingSecrets.length > 0 && { fetch: signedFetch(signingSecrets) }),
  });
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

/**
 * With request signing on, every call to Minibridge carries a Standard Webhooks signature over
 * the exact bytes sent, made here with the `standardwebhooks` library: one `v1,` entry per active
 * secret (two while rotating), a new webhook-id per request.
 */
function signedFetch(secrets: string[]): (request: Request) => Promise<Response> {
  const webhooks = secrets.map((secret) => new Webhook(standardSecret(secret)));
  return async (request) => {
    const body = await request.text();
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    const now = new Date();
    const headers = new Headers(request.headers);
    headers.set('webhook-id', id);
    headers.set('webhook-timestamp', String(Math.floor(now.getTime() / 1000)));
    headers.set('webhook-signature', webhooks.map((webhook) => webhook.sign(id, now, body)).join(' '));
    return fetch(request.url, { method: request.method, headers, body, signal: request.signal });
  };
}
