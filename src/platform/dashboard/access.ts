import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';
import { InvalidCursorError, type PartnerKind, type PartnerRow, type Queryable } from '../store/index.js';
import type { DashboardCaller } from './caller.js';
import type { PartnerDirectory } from './directory.js';

export const label = (kind: PartnerKind) => (kind === 'hostapp' ? 'host app' : 'miniapp');

export function directoryOf(platform: PlatformContext): PartnerDirectory {
  if (!platform.partners) throw new ApiError('UNKNOWN_ERROR', 'the dashboard is not available on this instance');
  return platform.partners;
}

export function cursorProblem(error: unknown): never {
  if (error instanceof InvalidCursorError) throw new ApiError('INVALID_REQUEST', 'cursor is not one this API produced');
  throw error;
}

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
