import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';
import { pageQuery, type DashboardCaller } from './caller.js';
import { hostappView, miniappView } from './settings.js';

function checkNameCursor(cursor: string | undefined): void {
  if (cursor !== undefined && !/^[A-Za-z0-9_-]{1,200}$/.test(cursor))
    throw new ApiError('INVALID_REQUEST', 'cursor is not one this API produced');
}

/** The partner lists: an operator sees every partner of the kind, a partner only itself. */
export const partnerLists = {
  async listHostapps(platform: PlatformContext, caller: DashboardCaller, query: Record<string, string | undefined>) {
    const { limit, cursor } = pageQuery(query);
    checkNameCursor(cursor);
    if (caller.partner?.kind === 'miniapp') return { hostapps: [], next_cursor: null };
    const page = await platform.store.partners.list('hostapp', limit, cursor, caller.partner ? [caller.partner.id] : undefined);
    return { hostapps: page.rows.map(hostappView), next_cursor: page.next };
  },

  async listMiniapps(platform: PlatformContext, caller: DashboardCaller, query: Record<string, string | undefined>) {
    const { limit, cursor } = pageQuery(query);
    checkNameCursor(cursor);
    if (caller.partner?.kind === 'hostapp') return { miniapps: [], next_cursor: null };
    const page = await platform.store.partners.list('miniapp', limit, cursor, caller.partner ? [caller.partner.id] : undefined);
    const partners = platform.store.partners;
    return {
      miniapps: await Promise.all(page.rows.map(async (row) => miniappView(row, await partners.links(platform.store.db, row.partner_id)))),
      next_cursor: page.next,
    };
  },
};
