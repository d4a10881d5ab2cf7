import { randomUUID } from 'node:crypto';
import type { components } from '../../../generated/types/platform.js';
import type { Db, Queryable } from './db.js';
import { InvalidCursorError } from './outbox.js';
import type { PinnedIds } from './pinnedIds.js';
import type { Clock } from './time.js';

export type PartnerKind = 'hostapp' | 'miniapp';
type AuditEntry = components['schemas']['AuditEntry'];
type Credential = components['schemas']['Credential'];
type CredentialKind = components['schemas']['CredentialKind'];

/** A partner row: `settings` is the contract's dashboard settings (DashboardHostapp/DashboardMiniapp without ids, links and times). */
export interface PartnerRow {
  partner_type: PartnerKind;
  partner_id: string;
  settings: Record<string, unknown>;
  import_digest: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface CredentialRow {
  credential_id: string;
  partner_type: PartnerKind;
  partner_id: string;
  kind: CredentialKind;
  verifier: string;
  sealed: string | null;
  /** `import`: brought by the registry file; `dashboard`: issued through the Dashboard API (ADR 0038). */
  origin: 'import' | 'dashboard';
  created_at: Date;
  revoked_at: Date | null;
}

/** Everything the in-memory partner snapshot is built from. */
export interface PartnerSnapshotRows {
  partners: PartnerRow[];
  links: { app_id: string; client_id: string }[];
  /** Active credentials, oldest first. */
  credentials: CredentialRow[];
}

export type NewAuditEntry = Omit<AuditEntry, 'audit_id' | 'at'>;

/** The NOTIFY channel partner changes are announced on; the payload is the schema (ADR 0028). */
export const PARTNERS_CHANNEL = 'minibridge_partners';

const cursorPattern = /^[1-9]\d{0,18}$/;

/**
 * The dashboard's tables (ADR 0027). Writes take a Queryable so a change, its audit entry and its
 * NOTIFY commit together; `announce` inside the transaction is delivered to the other instances
 * only on commit.
 */
export function createPartners(db: Db, clock: Clock, pinnedCredentialId?: PinnedIds['credential']) {
  const partnerColumns = 'partner_type, partner_id, settings, import_digest, created_at, updated_at';
  const credentialColumns =
    'credential_id::text AS credential_id, partner_type, partner_id, kind, verifier, sealed, origin, created_at, revoked_at';
  return {
    clock,
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => db.transaction(fn),

    async snapshot(): Promise<PartnerSnapshotRows> {
      const [partners, links, credentials] = await Promise.all([
        db.query<PartnerRow>(`SELECT ${partnerColumns} FROM partners`),
        db.query<{ app_id: string; client_id: string }>('SELECT app_id, client_id FROM partner_links'),
        db.query<CredentialRow>(`SELECT ${credentialColumns} FROM partner_credentials WHERE revoked_at IS NULL ORDER BY seq`),
      ]);
      return { partners, links, credentials };
    },

    async get(q: Queryable, kind: PartnerKind, id: string, forUpdate = false): Promise<PartnerRow | undefined> {
      const [row] = await q.query<PartnerRow>(
        `SELECT ${partnerColumns} FROM partners WHERE partner_type = $1 AND partner_id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
        [kind, id],
      );
      return row;
    },

    /** A page of partners after the id `after` (the one the previous page's cursor names), and the next cursor. */
    async list(
      kind: PartnerKind,
      limit: number,
      after: string | undefined,
      only?: readonly string[],
    ): Promise<{ rows: PartnerRow[]; next: string | null }> {
      const rows = await db.query<PartnerRow>(
        `SELECT ${partnerColumns} FROM partners
         WHERE partner_type = $1 AND ($2::text IS NULL OR partner_id > $2) AND ($3::text[] IS NULL OR partner_id = ANY($3::text[]))
         ORDER BY partner_id LIMIT $4`,
        [kind, after ?? null, only ? [...only] : null, limit + 1],
      );
      const page = rows.slice(0, limit);
      return { rows: page, next: rows.length > limit ? Buffer.from(page[page.length - 1]!.partner_id).toString('base64url') : null };
    },

    async insert(
      q: Queryable,
      kind: PartnerKind,
      id: string,
      settings: Record<string, unknown>,
      importDigest: string | null = null,
    ): Promise<PartnerRow> {
      const now = clock();
      const [row] = await q.query<PartnerRow>(
        `INSERT INTO partners (partner_type, partner_id, settings, import_digest, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT DO NOTHING RETURNING ${partnerColumns}`,
        [kind, id, JSON.stringify(settings), importDigest, now],
      );
      if (!row) throw new PartnerExists(kind, id);
      return row;
    },

    async update(
      q: Queryable,
      kind: PartnerKind,
      id: string,
      settings: Record<string, unknown>,
      importDigest?: string,
    ): Promise<PartnerRow> {
      const [row] = await q.query<PartnerRow>(
        `UPDATE partners SET settings = $3, updated_at = $4, import_digest = COALESCE($5, import_digest)
         WHERE partner_type = $1 AND partner_id = $2 RETURNING ${partnerColumns}`,
        [kind, id, JSON.stringify(settings), clock(), importDigest ?? null],
      );
      return row!;
    },

    async links(q: Queryable, appId: string): Promise<string[]> {
      const rows = await q.query<{ client_id: string }>('SELECT client_id FROM partner_links WHERE app_id = $1 ORDER BY client_id', [
        appId,
      ]);
      return rows.map((row) => row.client_id);
    },

    async linkedMiniapps(clientId: string): Promise<string[]> {
      const rows = await db.query<{ app_id: string }>('SELECT app_id FROM partner_links WHERE client_id = $1', [clientId]);
      return rows.map((row) => row.app_id);
    },

    /** True when the link was made (false: it existed). */
    async link(q: Queryable, appId: string, clientId: string): Promise<boolean> {
      const rows = await q.query('INSERT INTO partner_links (app_id, client_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING app_id', [
        appId,
        clientId,
      ]);
      return rows.length > 0;
    },

    async unlink(q: Queryable, appId: string, clientId: string): Promise<boolean> {
      const rows = await q.query('DELETE FROM partner_links WHERE app_id = $1 AND client_id = $2 RETURNING app_id', [appId, clientId]);
      return rows.length > 0;
    },

    async credentials(q: Queryable, kind: PartnerKind, id: string): Promise<CredentialRow[]> {
      return q.query<CredentialRow>(
        `SELECT ${credentialColumns} FROM partner_credentials WHERE partner_type = $1 AND partner_id = $2
         ORDER BY (revoked_at IS NULL) DESC, seq DESC LIMIT 20`,
        [kind, id],
      );
    },

    /** Every credential of one kind a partner ever had, active or revoked, oldest first (the registry import's reconciliation). */
    async credentialHistory(q: Queryable, kind: PartnerKind, id: string, credentialKind: CredentialKind): Promise<CredentialRow[]> {
      return q.query<CredentialRow>(
        `SELECT ${credentialColumns} FROM partner_credentials WHERE partner_type = $1 AND partner_id = $2 AND kind = $3 ORDER BY seq`,
        [kind, id, credentialKind],
      );
    },

    async insertCredential(q: Queryable, row: Omit<CredentialRow, 'credential_id' | 'created_at' | 'revoked_at'>): Promise<CredentialRow> {
      const insert = (id: string) =>
        q.query<CredentialRow>(
          `INSERT INTO partner_credentials (credential_id, partner_type, partner_id, kind, verifier, sealed, origin, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (credential_id) DO NOTHING RETURNING ${credentialColumns}`,
          [id, row.partner_type, row.partner_id, row.kind, row.verifier, row.sealed, row.origin, clock()],
        );
      const pinned = pinnedCredentialId?.(row);
      const [inserted] = pinned === undefined ? [] : await insert(pinned);
      return inserted ?? (await insert(randomUUID()))[0]!;
    },

    /** Revokes and erases the sealed secret; the verifier stays for the record. */
    async revokeCredential(q: Queryable, credentialId: string): Promise<CredentialRow | undefined> {
      const [row] = await q.query<CredentialRow>(
        `UPDATE partner_credentials SET revoked_at = COALESCE(revoked_at, $2), sealed = NULL
         WHERE credential_id = $1 RETURNING ${credentialColumns}`,
        [credentialId, clock()],
      );
      return row;
    },

    async audit(q: Queryable, entry: NewAuditEntry): Promise<void> {
      await q.query(
        `INSERT INTO audit_entries (audit_id, at, actor_type, actor_id, action, partner_type, partner_id, changes)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          randomUUID(),
          clock(),
          entry.actor.type,
          entry.actor.id,
          entry.action,
          entry.partner_type,
          entry.partner_id,
          JSON.stringify(entry.changes),
        ],
      );
    },

    async auditPage(
      partnerType: AuditEntry['partner_type'],
      partnerId: string,
      limit: number,
      cursor: string | undefined,
    ): Promise<{ entries: AuditEntry[]; next_cursor: string | null }> {
      if (cursor !== undefined && !cursorPattern.test(cursor)) throw new InvalidCursorError(cursor);
      const rows = await db.query<{
        seq: string;
        audit_id: string;
        at: Date;
        actor_type: AuditEntry['actor']['type'];
        actor_id: string | null;
        action: AuditEntry['action'];
        changes: AuditEntry['changes'];
      }>(
        `SELECT seq::text AS seq, audit_id::text AS audit_id, at, actor_type, actor_id, action, changes FROM audit_entries
         WHERE partner_type = $1 AND partner_id = $2 AND ($3::bigint IS NULL OR seq < $3::bigint)
         ORDER BY audit_entries.seq DESC LIMIT $4 -- the column, not the text alias above ("10" < "9")
        `,
        [partnerType, partnerId, cursor ?? null, limit + 1],
      );
      const page = rows.slice(0, limit);
      return {
        entries: page.map((row) => ({
          audit_id: row.audit_id,
          at: new Date(row.at).toISOString(),
          actor: { type: row.actor_type, id: row.actor_id },
          action: row.action,
          partner_type: partnerType,
          partner_id: partnerId,
          changes: row.changes,
        })),
        next_cursor: rows.length > limit ? page[page.length - 1]!.seq : null,
      };
    },

    /** Which key sealed the secrets, and the verifier pepper sealed under it (ADR 0038); undefined before the first record. */
    async keyRecord(q: Queryable): Promise<{ key_id: string; pepper: string } | undefined> {
      const [row] = await q.query<{ key_id: string; pepper: string }>('SELECT key_id, pepper FROM secrets_key');
      return row;
    },

    async saveKeyRecord(q: Queryable, record: { key_id: string; pepper: string }): Promise<void> {
      await q.query(
        `INSERT INTO secrets_key (singleton, key_id, pepper, sealed_at) VALUES (TRUE, $1, $2, $3)
         ON CONFLICT (singleton) DO UPDATE SET key_id = EXCLUDED.key_id, pepper = EXCLUDED.pepper, sealed_at = EXCLUDED.sealed_at`,
        [record.key_id, record.pepper, clock()],
      );
    },

    /** Every credential still holding its sealed secret (the active ones), for re-sealing under a new key. */
    async sealedCredentials(q: Queryable): Promise<Pick<CredentialRow, 'credential_id' | 'partner_type' | 'partner_id' | 'sealed'>[]> {
      return q.query(
        `SELECT credential_id::text AS credential_id, partner_type, partner_id, sealed FROM partner_credentials
         WHERE sealed IS NOT NULL ORDER BY seq`,
      );
    },

    async reseal(q: Queryable, credentialId: string, sealed: string): Promise<void> {
      await q.query('UPDATE partner_credentials SET sealed = $2 WHERE credential_id = $1 AND sealed IS NOT NULL', [credentialId, sealed]);
    },

    /** Tells every instance the partners changed (delivered on commit; ADR 0028). */
    async announce(q: Queryable): Promise<void> {
      await q.query(`SELECT pg_notify('${PARTNERS_CHANNEL}', current_schema())`);
    },
  };
}

export type Partners = ReturnType<typeof createPartners>;

export function credentialView(row: CredentialRow): Credential {
  return {
    credential_id: row.credential_id,
    kind: row.kind,
    status: row.revoked_at ? 'revoked' : 'active',
    created_at: new Date(row.created_at).toISOString(),
    revoked_at: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
  };
}

/** The partner id is already registered. */
export class PartnerExists extends Error {
  constructor(kind: PartnerKind, id: string) {
    super(`${kind === 'hostapp' ? 'client_id' : 'app_id'} ${id} is already registered`);
  }
}
