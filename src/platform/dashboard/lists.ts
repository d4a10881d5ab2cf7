import { ApiError } from '../../contract/errors.js';
import { schemaValidator } from '../../contract/operations.js';
import type { PlatformContext } from '../context.js';
import { pageQuery, type DashboardCaller } from './caller.js';
import { hostappView, miniappView } from './settings.js';

/**
 * The partner id a list cursor names, or INVALID_REQUEST for a cursor this API could not have
 * made. The API makes a cursor by encoding the last id of a page in base64url (store/partners.ts),
 * so a cursor is accepted only when it is that encoding, exactly, of text an id can be: valid
 * UTF-8 (the encoding round-trips), within the id's schema, and without NUL, which no store keeps
 * (PostgreSQL fails the query). A cursor naming an id that does not exist (any more) is still a
 * position in the order, as keyset pagination has it.
 */
function nameCursor(cursor: string | undefined, kind: 'ClientId' | 'AppId'): string | undefined {
  if (cursor === undefined) return undefined;
  const decoded = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : undefined;
  const made =
    decoded !== undefined &&
    Buffer.from(decoded, 'utf8').toString('base64url') === cursor &&
    !decoded.includes('\0') &&
    schemaValidator('platform', kind)(decoded);
  if (!made) throw new ApiError('INVALID_REQUEST', 'cursor is not one this API produced');
  return decoded;
}

/** A list's page, as listHostapps and listMiniapps type their query. */
type PageQuery = { limit?: number; cursor?: string };

/** The partner lists: an operator sees every partner of the kind, a partner only itself. */
export const partnerLists = {
  async listHostapps(platform: PlatformContext, caller: DashboardCaller, query: PageQuery) {
    const { limit, cursor } = pageQuery(query);
    const after = nameCursor(cursor, 'ClientId');
    if (caller.partner?.kind === 'miniapp') return { hostapps: [], next_cursor: null };
    const page = await platform.store.partners.list('hostapp', limit, after, caller.partner ? [caller.partner.id] : undefined);
    return { hostapps: page.rows.map(hostappView), next_cursor: page.next };
  },

  async listMiniapps(platform: PlatformContext, caller: DashboardCaller, query: PageQuery) {
    const { limit, cursor } = pageQuery(query);
    const after = nameCursor(cursor, 'AppId');
    if (caller.partner?.kind === 'hostapp') return { miniapps: [], next_cursor: null };
    const page = await platform.store.partners.list('miniapp', limit, after, caller.partner ? [caller.partner.id] : undefined);
    const partners = platform.store.partners;
    return {
      miniapps: await Promise.all(page.rows.map(async (row) => miniappView(row, await partners.links(platform.store.db, row.partner_id)))),
      next_cursor: page.next,
    };
  },
};
