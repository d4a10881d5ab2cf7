import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { components } from '../../../generated/types/platform.js';
import { ApiError } from '../../contract/errors.js';
import { operation } from '../../contract/operations.js';
import { statementCsvColumns, statementTotalsLimit } from '../../contract/records.js';
import type { PlatformContext } from '../context.js';
import { checkStatementCursor, storableInstant, type StatementOwner, type TotalKey } from '../store/index.js';
import { accessible } from './access.js';
import { cursorProblem, type DashboardCaller } from './caller.js';
import { kindOf, type PartnerType } from './settings.js';

type Schemas = components['schemas'];

/** Lines, then totals, read per statement while a CSV streams out. */
const CSV_PAGE = 1_000;

/** A calendar date that exists, or 400. */
function checkedDay(day: string): string {
  if (!storableInstant(`${day}T00:00:00Z`)) throw new ApiError('INVALID_REQUEST', `${day} is not a calendar date`);
  return day;
}

async function closedStatement(platform: PlatformContext, caller: DashboardCaller, type: PartnerType, id: string, day: string) {
  const kind = kindOf(type);
  await accessible(platform, caller, kind, id);
  const closedAt = await platform.store.statements.closedAt(checkedDay(day));
  // An open day, or a closed one the worker has yet to write, is missing: it has no statement yet.
  if (!closedAt) throw new ApiError('NOT_FOUND', `no statement of ${day} for ${id}: a day closes at 01:00 UTC the next day`);
  return { owner: { kind, id } satisfies StatementOwner, closedAt };
}

/** Partners' daily statements (ADR 0041): JSON pages and the whole day as CSV. */
export const statementReads = {
  async getPartnerStatement(
    platform: PlatformContext,
    caller: DashboardCaller,
    type: PartnerType,
    id: string,
    day: string,
    query: { limit?: number; cursor?: string },
  ): Promise<Schemas['Statement']> {
    // A cursor this API never made is the caller's mistake, whichever day it names.
    if (query.cursor !== undefined) {
      try {
        checkStatementCursor(query.cursor);
      } catch (error) {
        cursorProblem(error);
      }
    }
    const { owner, closedAt } = await closedStatement(platform, caller, type, id, day);
    const limit = statementTotalsLimit();
    const [totals, page] = await Promise.all([
      platform.store.statements.totals(owner, day, limit + 1),
      platform.store.statements.lines(owner, day, query.limit ?? 200, query.cursor).catch(cursorProblem),
    ]);
    // Every page carries every total, and the contract bounds them: a day with more (a currency
    // is any text an E1 sends) is read as CSV, which carries them all (ADR 0041).
    if (totals.length > limit) {
      const csv = operation('downloadPartnerStatement')
        .path.replace('{partner_type}', type)
        .replace('{partner_id}', encodeURIComponent(id))
        .replace('{day}', day);
      throw new ApiError(
        'CONFLICT',
        `the statement of ${day} for ${id} has more than ${limit} totals (currency and status), the most a JSON statement carries: download it as CSV (GET ${csv}), which carries every line and every total`,
      );
    }
    return { day, closed_at: closedAt.toISOString(), totals, ...page };
  },

  /** The CSV as a stream: lines are read page by page while it is sent, never held whole. */
  async downloadPartnerStatement(platform: PlatformContext, caller: DashboardCaller, type: PartnerType, id: string, day: string) {
    const { owner } = await closedStatement(platform, caller, type, id, day);
    const { statements } = platform.store;
    async function* records() {
      let cursor: string | undefined;
      do {
        const page = await statements.lines(owner, day, CSV_PAGE, cursor);
        for (const line of page.lines)
          yield {
            ...line,
            record: line.adjustment ? 'adjustment' : 'payment',
            count: '',
          };
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      let after: TotalKey | undefined;
      do {
        const totals = await statements.totals(owner, day, CSV_PAGE, after);
        for (const total of totals) yield { record: 'total', ...total, count: String(total.count) };
        after = totals.length === CSV_PAGE ? totals[totals.length - 1] : undefined;
      } while (after);
    }
    // RFC 4180 (CRLF, quotes doubled), a header row; a cell starting with = + - @ tab or CR gets a
    // leading ' so a spreadsheet shows it as text instead of running it (ADR 0041).
    const csv = stringify({ header: true, columns: [...statementCsvColumns()], record_delimiter: 'windows', escape_formulas: true });
    // A pipeline, not pipe(): a page that fails to read (the database gone midway) reaches the
    // CSV stream as its error and cuts the download; pipe() would leave it unhandled on the source.
    pipeline(Readable.from(records()), csv, () => {});
    return {
      body: csv,
      contentType: 'text/csv; charset=utf-8',
      headers: { 'Content-Disposition': `attachment; filename="statement-${id.replace(/[^A-Za-z0-9._-]/g, '_')}-${day}.csv"` },
    };
  },
};
