import type { components } from '../../../generated/types/platform.js';
import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';
import { credentialView } from '../store/index.js';
import { accessible } from './access.js';
import { cursorProblem, pageQuery, type DashboardCaller } from './caller.js';
import { hostappView, kindOf, miniappView, type PartnerType } from './settings.js';

/** What a caller may read of one partner, and redelivery (it changes no setting). */
export const partnerReads = {
  async getHostapp(platform: PlatformContext, caller: DashboardCaller, clientId: string) {
    return hostappView(await accessible(platform, caller, 'hostapp', clientId));
  },

  async getMiniapp(platform: PlatformContext, caller: DashboardCaller, appId: string) {
    const row = await accessible(platform, caller, 'miniapp', appId);
    return miniappView(row, await platform.store.partners.links(platform.store.db, appId));
  },

  async listCredentials(platform: PlatformContext, caller: DashboardCaller, type: PartnerType, id: string) {
    const kind = kindOf(type);
    await accessible(platform, caller, kind, id);
    return { credentials: (await platform.store.partners.credentials(platform.store.db, kind, id)).map(credentialView) };
  },

  async listDeliveries(
    platform: PlatformContext,
    caller: DashboardCaller,
    type: PartnerType,
    id: string,
    query: Record<string, string | undefined>,
  ) {
    const kind = kindOf(type);
    await accessible(platform, caller, kind, id);
    const { limit, cursor } = pageQuery(query);
    return platform.store.outbox
      .list({
        status: query.status as components['schemas']['DeliveryStatus'] | undefined,
        limit,
        cursor,
        ...(kind === 'miniapp' ? { appId: id } : { clientId: id }),
      })
      .catch(cursorProblem);
  },

  async redeliver(platform: PlatformContext, caller: DashboardCaller, type: PartnerType, id: string, deliveryId: string) {
    const kind = kindOf(type);
    await accessible(platform, caller, kind, id);
    const delivery = await platform.store.outbox.get(deliveryId);
    // A delivery of another partner is answered as missing, like any other partner's resource.
    const owned = delivery && (kind === 'miniapp' ? delivery.app_id === id : delivery.client_id === id);
    const requeued = owned ? await platform.store.outbox.requeue(deliveryId) : null;
    if (!delivery || !requeued) throw new ApiError('NOT_FOUND', `no delivery ${deliveryId} for ${id}`);
    await platform.store.partners.audit(platform.store.db, {
      actor: caller.actor,
      action: 'redeliver',
      partner_type: type,
      partner_id: id,
      changes: [{ field: `delivery.${deliveryId}`, before: JSON.stringify(delivery.status), after: '"pending"' }],
    });
    platform.wakeWorker();
    return requeued;
  },

  async listAudit(
    platform: PlatformContext,
    caller: DashboardCaller,
    type: PartnerType,
    id: string,
    query: Record<string, string | undefined>,
  ) {
    await accessible(platform, caller, kindOf(type), id);
    const { limit, cursor } = pageQuery(query);
    return platform.store.partners.auditPage(type, id, limit, cursor).catch(cursorProblem);
  },
};
