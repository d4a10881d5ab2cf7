import type { operations } from '../../../generated/types/platform.js';
import type { PlatformContext } from '../context.js';
import { redeliver } from '../delivery/redelivery.js';
import { credentialView } from '../store/index.js';
import { accessible } from './access.js';
import { cursorProblem, pageQuery, type DashboardCaller } from './caller.js';
import { hostappView, kindOf, miniappView, type PartnerType } from './settings.js';

/** What a caller may read of one partner, and redelivery (it changes no setting; ADR 0038). */
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
    query: NonNullable<operations['listPartnerDeliveries']['parameters']['query']>,
  ) {
    const kind = kindOf(type);
    await accessible(platform, caller, kind, id);
    const { limit, cursor } = pageQuery(query);
    return platform.store.outbox
      .list({
        status: query.status,
        orderPaymentId: query.order_payment_id,
        limit,
        cursor,
        ...(kind === 'miniapp' ? { appId: id } : { clientId: id }),
      })
      .catch(cursorProblem);
  },

  async redeliver(platform: PlatformContext, caller: DashboardCaller, type: PartnerType, id: string, deliveryId: string) {
    const kind = kindOf(type);
    await accessible(platform, caller, kind, id);
    // A delivery of another partner is answered as missing, like any other partner's resource.
    return redeliver(platform, {
      deliveryId,
      actor: caller.actor,
      owner: { kind, id },
      budgetOf: caller.partner ? `${kind}:${id}` : undefined,
    });
  },

  async listAudit(
    platform: PlatformContext,
    caller: DashboardCaller,
    type: PartnerType,
    id: string,
    query: NonNullable<operations['listAuditEntries']['parameters']['query']>,
  ) {
    await accessible(platform, caller, kindOf(type), id);
    const { limit, cursor } = pageQuery(query);
    return platform.store.partners.auditPage(type, id, limit, cursor).catch(cursorProblem);
  },
};
