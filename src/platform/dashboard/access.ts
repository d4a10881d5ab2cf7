import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';
import type { PartnerKind, PartnerRow, Queryable } from '../store/index.js';
import type { DashboardCaller } from './caller.js';

export const label = (kind: PartnerKind) => (kind === 'hostapp' ? 'host app' : 'miniapp');

/** A partner row the caller may access (locked when read in a transaction), or NOT_FOUND. */
export async function accessible(
  platform: PlatformContext,
  caller: DashboardCaller,
  kind: PartnerKind,
  id: string,
  tx?: Queryable,
): Promise<PartnerRow> {
  const row = caller.mayAccess(kind, id)
    ? await platform.store.partners.get(tx ?? platform.store.db, kind, id, tx !== undefined)
    : undefined;
  if (!row) throw new ApiError('NOT_FOUND', `no ${label(kind)} ${id}`);
  return row;
}
