import type { components } from '../../../generated/types/platform.js';
import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';

type Actor = components['schemas']['AuditEntry']['actor'];
type Delivery = components['schemas']['Delivery'];

export interface RedeliveryRequest {
  deliveryId: string;
  /** Who asks: recorded in the audit log of both parties to the payment. */
  actor: Actor;
  /** Only a delivery of this partner (the dashboard): any other is answered as missing. */
  owner?: { kind: 'hostapp' | 'miniapp'; id: string };
  /** The partner whose redelivery budget the request spends (`x-rate-limits.redelivery`); operators spend none. */
  budgetOf?: string;
}

/**
 * One redelivery of an E6 callback, for the admin API and the dashboard alike (ADR 0038). It
 * never opens a second request for a delivery whose attempt is in flight (the outbox coalesces
 * it with that attempt) and never bypasses the miniapp's `x-max-in-flight` (the attempt it queues
 * waits for a slot like any other), attempts go on being numbered and recorded as before, a
 * signed-in partner spends its redelivery budget, and both the miniapp and the host app see the
 * request in their audit logs, in the transaction that queues it.
 */
export async function redeliver(platform: PlatformContext, request: RedeliveryRequest): Promise<Delivery> {
  const { deliveryId, actor, owner } = request;
  const missing = () => new ApiError('NOT_FOUND', owner ? `no delivery ${deliveryId} for ${owner.id}` : `no delivery ${deliveryId}`);
  const current = await platform.store.outbox.get(deliveryId);
  const owned = current && (!owner || (owner.kind === 'miniapp' ? current.app_id === owner.id : current.client_id === owner.id));
  if (!current || !owned) throw missing();
  if (request.budgetOf !== undefined) {
    const decision = await platform.rateLimiters.redelivery.take(request.budgetOf);
    if (!decision.allowed) {
      const { burst, perSecond } = platform.rateLimiters.redelivery.budget;
      throw new ApiError(
        'RATE_LIMITED',
        `more than ${burst} redeliveries, then one every ${Math.round(1 / perSecond)} s, from ${request.budgetOf.replace(/^\w+:/, '')}; retry after ${decision.retryAfterSeconds} s`,
        decision.headers,
      );
    }
  }
  const requeued = await platform.store.db.transaction(async (tx) => {
    const result = await platform.store.outbox.requeue(deliveryId, tx);
    if (!result) return null;
    const change = {
      field: `delivery.${deliveryId}`,
      before: JSON.stringify(current.status),
      after: JSON.stringify(result.coalesced ? 'pending (joined the attempt in flight)' : 'pending'),
    };
    for (const [partnerType, partnerId] of [
      ['miniapps', current.app_id],
      ['hostapps', current.client_id],
    ] as const)
      await platform.store.partners.audit(tx, {
        actor,
        action: 'redeliver',
        partner_type: partnerType,
        partner_id: partnerId,
        changes: [change],
      });
    return result;
  });
  if (!requeued) throw missing();
  const fields = { delivery_id: deliveryId, event_id: current.event_id, actor: actor.id ?? actor.type };
  if (requeued.coalesced) platform.log.info(fields, 'redelivery joined the attempt in flight');
  else {
    platform.log.info(fields, 'delivery queued for redelivery');
    platform.wakeWorker();
  }
  return requeued.delivery;
}
