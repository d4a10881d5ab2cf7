import { checkUrls, internalUrlsAfter } from './urls.js';
import type { components } from '../../../generated/types/platform.js';
import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';
import { credentialView, type PartnerRow, type Queryable } from '../store/index.js';
import { accessible } from './access.js';
import type { DashboardCaller } from './caller.js';
import {
  changesBetween,
  hostappView,
  lifecycleDefaults,
  kindOf,
  miniappView,
  typeOf,
  type HostappSettings,
  type MiniappSettings,
  type PartnerType,
} from './settings.js';
import { activeSigningSecrets, checkAllowList, checkHostapps, issue, MAX_ACTIVE_PER_KIND, write } from './writes.js';

type Schemas = components['schemas'];
type CredentialKind = Schemas['CredentialKind'];

/** Changes to partners: each in one transaction with its audit entry and NOTIFY (ADR 0027, ADR 0028). */
export const partnerChanges = {
  async updateHostapp(platform: PlatformContext, caller: DashboardCaller, clientId: string, body: Schemas['UpdateHostappRequest']) {
    checkAllowList(body.allowed_ips);
    checkUrls(caller, body.urls, platform.config.sandboxLoopback, platform.config.port);
    return write(platform, async (tx) => {
      const row = await accessible(platform, caller, 'hostapp', clientId, tx);
      const before = { ...(row.settings as HostappSettings), ...lifecycleDefaults(row.settings as Partial<HostappSettings>) };
      const after: HostappSettings = {
        ...before,
        ...body,
        urls: { ...before.urls, ...body.urls },
        internal_urls: internalUrlsAfter(caller, before.internal_urls, body.urls),
        features: { ...before.features, ...body.features },
        signing: body.signing ?? before.signing,
        ...lifecycleDefaults({ ...before, ...body }),
      } as HostappSettings;
      if (after.internal_urls === undefined) delete after.internal_urls;
      return hostappView(await applyUpdate(platform, tx, caller, row, before, after));
    });
  },

  async updateMiniapp(platform: PlatformContext, caller: DashboardCaller, appId: string, body: Schemas['UpdateMiniappRequest']) {
    checkAllowList(body.allowed_ips);
    checkUrls(caller, body.urls, platform.config.sandboxLoopback, platform.config.port);
    const { hostapps, ...fields } = body;
    // Links decide which host apps a miniapp may charge through: an operator's decision, never the miniapp's.
    if (hostapps !== undefined && caller.partner)
      throw new ApiError('UNAUTHORIZED', 'only operators change the host apps a miniapp is linked to');
    return write(platform, async (tx) => {
      const row = await accessible(platform, caller, 'miniapp', appId, tx);
      const before = row.settings as MiniappSettings;
      const after = {
        ...before,
        ...fields,
        urls: { ...before.urls, ...fields.urls },
        internal_urls: internalUrlsAfter(caller, before.internal_urls, fields.urls),
        features: { ...before.features, ...fields.features },
        signing: fields.signing ?? before.signing,
      } as MiniappSettings;
      if (after.internal_urls === undefined) delete after.internal_urls;
      const saved = Object.keys(fields).length > 0 ? await applyUpdate(platform, tx, caller, row, before, after) : row;
      if (hostapps !== undefined) {
        await checkHostapps(platform, tx, hostapps);
        const old = await platform.store.partners.links(tx, appId);
        for (const clientId of old) if (!hostapps.includes(clientId)) await platform.store.partners.unlink(tx, appId, clientId);
        for (const clientId of hostapps) await platform.store.partners.link(tx, appId, clientId);
        const now = [...hostapps].sort();
        if (JSON.stringify(old) !== JSON.stringify(now))
          await platform.store.partners.audit(tx, {
            actor: caller.actor,
            action: 'update',
            partner_type: 'miniapps',
            partner_id: appId,
            changes: [{ field: 'hostapps', before: JSON.stringify(old), after: JSON.stringify(now) }],
          });
      }
      return miniappView(saved, await platform.store.partners.links(tx, appId));
    });
  },

  async issueCredential(platform: PlatformContext, caller: DashboardCaller, type: PartnerType, id: string, credentialKind: CredentialKind) {
    const kind = kindOf(type);
    return write(platform, async (tx) => {
      const row = await accessible(platform, caller, kind, id, tx);
      const active = (await platform.store.partners.credentials(tx, kind, id)).filter((c) => c.kind === credentialKind && !c.revoked_at);
      if (active.length >= MAX_ACTIVE_PER_KIND)
        throw new ApiError(
          'CONFLICT',
          `${id} already has ${MAX_ACTIVE_PER_KIND} active ${credentialKind} credentials: revoke the old one first`,
        );
      const credential = await issue(platform, tx, row, credentialKind);
      await platform.store.partners.audit(tx, {
        actor: caller.actor,
        action: 'issue_credential',
        partner_type: type,
        partner_id: id,
        changes: [{ field: `credential.${credential.credential_id}`, before: null, after: `"active ${credentialKind}"` }],
      });
      return credential;
    });
  },

  async revokeCredential(platform: PlatformContext, caller: DashboardCaller, type: PartnerType, id: string, credentialId: string) {
    const kind = kindOf(type);
    return write(platform, async (tx) => {
      const row = await accessible(platform, caller, kind, id, tx);
      const all = await platform.store.partners.credentials(tx, kind, id);
      const target = all.find((c) => c.credential_id === credentialId.toLowerCase());
      if (!target) throw new ApiError('NOT_FOUND', `no credential ${credentialId} for ${id}`);
      if (target.revoked_at) return credentialView(target);
      const othersActive = all.filter((c) => c.kind === target.kind && !c.revoked_at && c.credential_id !== target.credential_id).length;
      if (target.kind === 'secret_key' && othersActive === 0)
        throw new ApiError('CONFLICT', 'this is the last active secret_key: issue a new one first');
      if (target.kind === 'signing_secret' && othersActive === 0 && (row.settings as HostappSettings).signing.enabled)
        throw new ApiError('CONFLICT', 'this is the last active signing secret while signing is enabled: disable signing first');
      const revoked = await platform.store.partners.revokeCredential(tx, target.credential_id);
      await platform.store.partners.audit(tx, {
        actor: caller.actor,
        action: 'revoke_credential',
        partner_type: type,
        partner_id: id,
        changes: [{ field: `credential.${target.credential_id}`, before: `"active ${target.kind}"`, after: '"revoked"' }],
      });
      return credentialView(revoked!);
    });
  },
};

async function applyUpdate(
  platform: PlatformContext,
  tx: Queryable,
  caller: DashboardCaller,
  row: PartnerRow,
  before: HostappSettings | MiniappSettings,
  after: HostappSettings | MiniappSettings,
): Promise<PartnerRow> {
  if (
    after.signing.enabled &&
    !before.signing.enabled &&
    (await activeSigningSecrets(tx, platform, row.partner_type, row.partner_id)) === 0
  )
    throw new ApiError('CONFLICT', 'signing.enabled needs an active signing secret: issue a signing_secret first');
  const changes = changesBetween(before, after);
  if (changes.length === 0) return row;
  const saved = await platform.store.partners.update(tx, row.partner_type, row.partner_id, after);
  await platform.store.partners.audit(tx, {
    actor: caller.actor,
    action: 'update',
    partner_type: typeOf(row.partner_type),
    partner_id: row.partner_id,
    changes,
  });
  return saved;
}
