import type { Logger } from 'pino';
import { IpAllowList } from '../auth/ipAllowList.js';
import { equalsConstantTime } from '../../wire/credentials.js';
import { basicAuthorization, prefixedAuthorization } from '../../wire/authorization.js';
import { Registry, type Hostapp, type Miniapp } from '../registry/registry.js';
import type { Listening, Queryable, Store, PartnerRow, CredentialRow, PartnerKind, NewAuditEntry } from '../store/index.js';
import { PARTNERS_CHANNEL } from '../store/index.js';
import type { SecretBox } from './secrets.js';
import { changesBetween, hostappSettingsOf, miniappSettingsOf, typeOf, type HostappSettings, type MiniappSettings } from './settings.js';

/** One audit change (field, before, after), as the audit log holds it. */
type AuditChange = NewAuditEntry['changes'][number];

/** What a registry import does to one kind of a partner's credentials (ADR 0038). */
interface CredentialPlan {
  /** Secrets the file names that the partner never had: added, as the import's. */
  add: string[];
  /** Credentials the file names that were revoked: left revoked. */
  keptRevoked: CredentialRow[];
  /** Active credentials an import brought that the file no longer names: revoked. */
  revoke: CredentialRow[];
  /** How many of the kind are active once the plan is carried out. */
  activeAfter: number;
}

/** How often the snapshot is re-read even without a notification (a notification lost with its connection). */
const SAFETY_REFRESH_MS = 30_000;

/**
 * The partners the platform serves, read from the database (ADR 0028). Requests look partners up
 * in an in-memory snapshot (a Map lookup, as with the old file registry); a write through any
 * instance NOTIFYs the others, which re-read the snapshot at once. PGlite is single-instance:
 * the writer refreshes its own snapshot after each commit, which is all it needs.
 */
export class PartnerDirectory {
  private snapshot: Registry = Registry.of([], []);
  private refreshing: Promise<void> | undefined;
  private again = false;
  private listener: Listening | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopWatching: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    readonly box: SecretBox,
    private readonly log: Logger,
  ) {}

  get current(): Registry {
    return this.snapshot;
  }

  /**
   * Reads the partners, listens for changes (PostgreSQL) and re-reads every SAFETY_REFRESH_MS.
   * While the database is down the snapshot in memory keeps serving and nothing is re-read;
   * when it is back (or the listener reconnects), the snapshot is re-read at once, since a
   * change made meanwhile was announced to nobody (ADR 0037).
   */
  async start(): Promise<void> {
    await this.refresh();
    const { db } = this.store;
    if (db.backend === 'postgres') {
      const [{ schema }] = (await db.query<{ schema: string }>('SELECT current_schema() AS schema')) as [{ schema: string }];
      this.listener = await db.listen(
        PARTNERS_CHANNEL,
        (payload) => {
          if (payload === schema) this.refreshQuietly();
        },
        () => this.refreshQuietly(),
      );
    }
    this.stopWatching = db.availability.onChange((up) => {
      if (up) this.refreshQuietly();
    });
    this.timer = setInterval(() => {
      if (db.availability.up) this.refreshQuietly();
    }, SAFETY_REFRESH_MS);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.stopWatching?.();
    await this.listener?.end().catch(() => undefined);
    await this.refreshing?.catch(() => undefined);
  }

  private refreshQuietly(): void {
    this.refresh().catch((error: Error) => this.log.warn({ err: error }, 'partner refresh failed; the last snapshot keeps serving'));
  }

  /** Re-reads the partners; concurrent calls share one read, and a call during a read runs another after it. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.again = false;
          this.snapshot = this.build(await this.store.partners.snapshot());
        } while (this.again);
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private build(rows: Awaited<ReturnType<Store['partners']['snapshot']>>): Registry {
    const credentials = new Map<string, CredentialRow[]>();
    for (const credential of rows.credentials) {
      const key = `${credential.partner_type}:${credential.partner_id}`;
      credentials.set(key, [...(credentials.get(key) ?? []), credential]);
    }
    const links = new Map<string, string[]>();
    for (const link of rows.links) links.set(link.app_id, [...(links.get(link.app_id) ?? []), link.client_id]);
    const hostapps: Hostapp[] = [];
    const miniapps: Miniapp[] = [];
    for (const row of rows.partners) {
      try {
        const own = credentials.get(`${row.partner_type}:${row.partner_id}`) ?? [];
        const keys = own.filter((c) => c.kind === 'secret_key');
        const open = (c: CredentialRow) => this.box.open(c.sealed ?? '', c.credential_id);
        // The oldest active key is presented outbound until it is revoked (ADR 0027).
        const secretKey = keys[0] ? open(keys[0]) : '';
        const settings = row.settings as HostappSettings | MiniappSettings;
        const signingSecrets = settings.signing.enabled ? own.filter((c) => c.kind === 'signing_secret').map(open) : [];
        const base = {
          id: row.partner_id,
          secretKey,
          secretMatches: this.box.matcher(keys.map((c) => c.verifier)),
          idMatches: equalsConstantTime(row.partner_id),
          authorization:
            row.partner_type === 'hostapp'
              ? prefixedAuthorization((settings as HostappSettings).token_prefix, row.partner_id, secretKey)
              : basicAuthorization(row.partner_id, secretKey),
          signingSecrets,
          allowList: new IpAllowList(settings.allowed_ips),
          internalUrls: new Set<string>(settings.internal_urls ?? []),
          features: { payments: false, event_bridge: false, event_receiver: false, ...settings.features },
        };
        if (row.partner_type === 'hostapp') {
          const s = settings as HostappSettings;
          hostapps.push({
            ...base,
            kind: 'hostapp',
            tokenPrefix: s.token_prefix,
            registration: {
              client_id: row.partner_id,
              name: s.name,
              secret_key: secretKey,
              token_prefix: s.token_prefix,
              use_access_token: s.use_access_token,
              payment_status_method: s.payment_status_method,
              payment_lifetime_seconds: s.payment_lifetime_seconds,
              reconcile_after_seconds: s.reconcile_after_seconds,
              urls: s.urls,
              allowed_ips: s.allowed_ips,
              features: base.features,
            },
          });
        } else {
          const s = settings as MiniappSettings;
          const linked = links.get(row.partner_id) ?? [];
          miniapps.push({
            ...base,
            kind: 'miniapp',
            hostapps: new Set(linked),
            registration: {
              app_id: row.partner_id,
              name: s.name,
              secret_key: secretKey,
              hostapps: linked,
              urls: s.urls,
              allowed_ips: s.allowed_ips,
              features: base.features,
            },
          });
        }
      } catch (error) {
        // One unreadable partner (a secret sealed under another key) must not take the others down.
        this.log.error(
          { err: error, partner: `${row.partner_type}:${row.partner_id}` },
          'partner skipped: cannot read its settings or secrets',
        );
      }
    }
    // An unknown id costs what a known one does: one HMAC and the comparisons (ADR 0038).
    return Registry.of(hostapps, miniapps, this.box.matcher([]));
  }

  /**
   * Imports a registry (the file, or the sandbox's) into the database. Idempotent: each entry's
   * digest is kept, so an unchanged entry is skipped and changes made in the dashboard stay; an
   * entry that changed in the file since its last import is applied again (the sandbox's ports
   * move between runs). Instances starting together take turns (advisory lock).
   */
  async importRegistry(registry: Registry): Promise<{ created: number; updated: number }> {
    const counts = { created: 0, updated: 0 };
    const partners = this.store.partners;
    await partners.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('minibridge.import:' || current_schema()))");
      const { hostapps, miniapps } = registry.all();
      const entries: { kind: PartnerKind; partner: Hostapp | Miniapp; settings: HostappSettings | MiniappSettings; links: string[] }[] = [
        ...hostapps.map((h) => ({ kind: 'hostapp' as const, partner: h, settings: hostappSettingsOf(h), links: [] })),
        ...miniapps.map((m) => ({ kind: 'miniapp' as const, partner: m, settings: miniappSettingsOf(m), links: [...m.hostapps].sort() })),
      ];
      for (const { kind, partner, settings, links } of entries) {
        // internal_urls is derived from urls, and left out so entries imported before it existed stay unchanged.
        const { internal_urls: _derived, ...digested } = settings;
        const digest = this.box.verifier(
          JSON.stringify({ settings: digested, links, key: partner.secretKey, signing: partner.signingSecrets }),
        );
        const row = await partners.get(tx, kind, partner.id, true);
        if (row?.import_digest === digest) {
          if (await this.recordFileExceptions(tx, row, settings)) counts.updated += 1;
          continue;
        }
        const plans = row
          ? {
              secretKey: this.planCredentials(await partners.credentialHistory(tx, kind, partner.id, 'secret_key'), [partner.secretKey]),
              signing: this.planCredentials(
                await partners.credentialHistory(tx, kind, partner.id, 'signing_secret'),
                partner.signingSecrets,
              ),
            }
          : { secretKey: this.planCredentials([], [partner.secretKey]), signing: this.planCredentials([], partner.signingSecrets) };
        // A revoked secret is never made active again, so the file may name only revoked ones: the
        // entry is then left as it stands rather than leave the partner without a secret_key, or
        // with signing on and no secret to check (which would accept unsigned requests).
        const stranded =
          plans.secretKey.activeAfter === 0
            ? 'secret_key'
            : settings.signing.enabled && plans.signing.activeAfter === 0
              ? 'signing secret'
              : undefined;
        if (stranded) {
          this.log.error(
            { partner: `${kind}:${partner.id}` },
            `registry entry not imported: every ${stranded} it names was revoked, and revoked credentials are never restored; name a new one or issue one in the dashboard`,
          );
          continue;
        }
        const saved = row
          ? await partners.update(tx, kind, partner.id, settings, digest)
          : await partners.insert(tx, kind, partner.id, settings, digest);
        const credentialChanges = [
          ...(await this.applyCredentials(tx, saved, 'secret_key', plans.secretKey)),
          ...(await this.applyCredentials(tx, saved, 'signing_secret', plans.signing)),
        ];
        if (kind === 'miniapp') {
          for (const old of await partners.links(tx, partner.id)) if (!links.includes(old)) await partners.unlink(tx, partner.id, old);
          for (const clientId of links) await partners.link(tx, partner.id, clientId);
        }
        await partners.audit(tx, {
          actor: { type: 'import', id: null },
          action: row ? 'update' : 'create',
          partner_type: typeOf(kind),
          partner_id: partner.id,
          changes: [
            ...changesBetween(row?.settings, { ...settings, ...(kind === 'miniapp' ? { hostapps: links } : {}) }),
            ...credentialChanges,
          ].slice(0, 40),
        });
        counts[row ? 'updated' : 'created'] += 1;
      }
      if (counts.created + counts.updated > 0) await partners.announce(tx);
    });
    await this.refresh();
    return counts;
  }

  /**
   * An entry imported before internal URLs were recorded (ADR 0038) keeps its file's internal URLs
   * reachable: each URL still exactly as the file (the operator's) registered it on an internal
   * address joins `internal_urls`, audited as the import's change. True when the row changed.
   */
  private async recordFileExceptions(tx: Queryable, row: PartnerRow, file: HostappSettings | MiniappSettings): Promise<boolean> {
    const stored = row.settings as HostappSettings | MiniappSettings;
    const storedUrls = stored.urls as Record<string, string | undefined>;
    const fileUrls = file.urls as Record<string, string | undefined>;
    const names = new Set<string>(stored.internal_urls ?? []);
    for (const name of file.internal_urls ?? []) if (storedUrls[name] === fileUrls[name]) names.add(name);
    if (names.size === (stored.internal_urls ?? []).length) return false;
    const after = { ...stored, internal_urls: [...names].sort() } as HostappSettings | MiniappSettings;
    await this.store.partners.update(tx, row.partner_type, row.partner_id, after);
    await this.store.partners.audit(tx, {
      actor: { type: 'import', id: null },
      action: 'update',
      partner_type: typeOf(row.partner_type),
      partner_id: row.partner_id,
      changes: changesBetween(stored, after),
    });
    return true;
  }

  /**
   * What an import does to one kind of a partner's credentials (ADR 0038), given every credential
   * of that kind it ever had: a secret the file names that is active stays; one that was revoked
   * stays revoked (a revocation made in the dashboard survives any import); a new one is added.
   * Active credentials the file no longer names are revoked only when an import brought them:
   * what the dashboard issued (a rotation's new key) is the dashboard's to revoke.
   */
  private planCredentials(history: readonly CredentialRow[], secrets: readonly string[]): CredentialPlan {
    const plan: CredentialPlan = { add: [], keptRevoked: [], revoke: [], activeAfter: 0 };
    const named = new Set<CredentialRow>();
    for (const secret of secrets) {
      const known = history.find((credential) => this.box.matches(secret, [credential.verifier]));
      if (!known) plan.add.push(secret);
      else if (known.revoked_at) plan.keptRevoked.push(known);
      if (known) named.add(known);
    }
    for (const credential of history)
      if (!credential.revoked_at && !named.has(credential) && credential.origin === 'import') plan.revoke.push(credential);
    const active = history.filter((credential) => !credential.revoked_at).length;
    plan.activeAfter = active - plan.revoke.length + new Set(plan.add).size;
    return plan;
  }

  /** Carries out a plan; every credential it changes, or declines to restore, is one audit change. */
  private async applyCredentials(
    tx: Queryable,
    row: PartnerRow,
    kind: 'secret_key' | 'signing_secret',
    plan: CredentialPlan,
  ): Promise<AuditChange[]> {
    const changes: AuditChange[] = [];
    for (const secret of new Set(plan.add)) {
      const credential = await this.insertCredential(tx, row, kind, secret, 'import');
      changes.push({ field: `credential.${credential.credential_id}`, before: null, after: JSON.stringify(`active ${kind}`) });
    }
    for (const credential of plan.revoke) {
      await this.store.partners.revokeCredential(tx, credential.credential_id);
      changes.push({ field: `credential.${credential.credential_id}`, before: JSON.stringify(`active ${kind}`), after: '"revoked"' });
    }
    for (const credential of plan.keptRevoked) {
      this.log.warn(
        { partner: `${row.partner_type}:${row.partner_id}`, credential_id: credential.credential_id },
        'the registry file names a revoked credential: it stays revoked',
      );
      changes.push({
        field: `credential.${credential.credential_id}`,
        before: '"revoked"',
        after: JSON.stringify('revoked (named by the registry file; revoked credentials are never restored)'),
      });
    }
    return changes;
  }

  /** Stores a credential: its verifier, and the secret sealed and bound to the credential's id. */
  async insertCredential(
    tx: Queryable,
    row: Pick<PartnerRow, 'partner_type' | 'partner_id'>,
    kind: 'secret_key' | 'signing_secret',
    secret: string,
    origin: CredentialRow['origin'],
  ): Promise<CredentialRow> {
    const partners = this.store.partners;
    const inserted = await partners.insertCredential(tx, {
      partner_type: row.partner_type,
      partner_id: row.partner_id,
      kind,
      verifier: this.box.verifier(secret),
      sealed: null,
      origin,
    });
    const sealed = this.box.seal(secret, inserted.credential_id);
    await tx.query('UPDATE partner_credentials SET sealed = $2 WHERE credential_id = $1', [inserted.credential_id, sealed]);
    return inserted;
  }
}
