import type { components } from '../../../generated/types/platform.js';
import { ApiError } from '../../contract/errors.js';
import { pageSize } from '../../contract/limits.js';
import type { Partner } from '../registry/registry.js';
import { InvalidCursorError, type PartnerKind } from '../store/index.js';

type Actor = components['schemas']['AuditEntry']['actor'];

/** Who is asking: an operator (the admin token) or a signed-in partner. */
export class DashboardCaller {
  constructor(readonly partner: Partner | undefined) {}

  get actor(): Actor {
    return this.partner ? { type: this.partner.kind, id: this.partner.id } : { type: 'operator', id: null };
  }

  /**
   * Whether the caller may see or change this partner: operators every one, a partner only
   * itself. Anything else is answered as missing, so a partner cannot tell another's resources
   * from absent ones (ADR 0027).
   */
  mayAccess(kind: PartnerKind, id: string): boolean {
    return !this.partner || (this.partner.kind === kind && this.partner.id === id);
  }
}

/** The page size and cursor of a list query: the contract's default page size when it names none. */
export function pageQuery(query: { limit?: number; cursor?: string }): { limit: number; cursor: string | undefined } {
  return { limit: query.limit ?? pageSize().default, cursor: query.cursor };
}

/** A cursor the store did not make: the caller's mistake (400), never the platform's. */
export function cursorProblem(error: unknown): never {
  if (error instanceof InvalidCursorError) throw new ApiError('INVALID_REQUEST', 'cursor is not one this API produced');
  throw error;
}
