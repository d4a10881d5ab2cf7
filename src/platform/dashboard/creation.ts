import { checkUrls, internalUrlsAfter } from './urls.js';
import type { components } from '../../../generated/types/platform.js';
import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';
import type { DashboardCaller } from './caller.js';
import { changesBetween, hostappView, lifecycleDefaults, miniappView, type HostappSettings, type MiniappSettings } from './settings.js';
import { checkAllowList, checkHostapps, insertOrRefuse, issue, write } from './writes.js';

type Schemas = components['schemas'];

/** Operators create partners; each gets its first secret_key, shown once (ADR 0027). */
export const partnerCreation = {
  async createHostapp(platform: PlatformContext, caller: DashboardCaller, body: Schemas['CreateHostappRequest']) {
    checkAllowList(body.allowed_ips);
    checkUrls(caller, body.urls, platform.config.sandboxLoopback, platform.config.port);
    if (body.signing?.enabled)
      throw new ApiError(
        'CONFLICT',
        'signing.enabled needs a signing secret: create the host app, issue a signing_secret, then enable signing',
      );
    const { client_id, ...fields } = body;
    const settings: HostappSettings = {
      name: fields.name!,
      token_prefix: fields.token_prefix ?? 'Token',
      use_access_token: fields.use_access_token ?? false,
      payment_status_method: fields.payment_status_method ?? 'POST',
      urls: fields.urls ?? {},
      ...optional('internal_urls', internalUrlsAfter(caller, undefined, fields.urls)),
      allowed_ips: fields.allowed_ips ?? [],
      signing: { enabled: false },
      features: { payments: false, event_bridge: false, event_receiver: false, ...fields.features },
      ...lifecycleDefaults(fields),
    };
    return write(platform, async (tx) => {
      const row = await insertOrRefuse(platform, tx, 'hostapp', client_id, settings);
      const credential = await issue(platform, tx, row, 'secret_key');
      await platform.store.partners.audit(tx, {
        actor: caller.actor,
        action: 'create',
        partner_type: 'hostapps',
        partner_id: client_id,
        changes: [
          ...changesBetween(undefined, settings),
          { field: `credential.${credential.credential_id}`, before: null, after: '"active secret_key"' },
        ],
      });
      return { hostapp: hostappView(row), credential };
    });
  },
  async createMiniapp(platform: PlatformContext, caller: DashboardCaller, body: Schemas['CreateMiniappRequest']) {
    checkAllowList(body.allowed_ips);
    checkUrls(caller, body.urls, platform.config.sandboxLoopback, platform.config.port);
    if (body.signing?.enabled)
      throw new ApiError(
        'CONFLICT',
        'signing.enabled needs a signing secret: create the miniapp, issue a signing_secret, then enable signing',
      );
    const { app_id, hostapps = [], ...fields } = body;
    const settings: MiniappSettings = {
      name: fields.name!,
      urls: fields.urls ?? {},
      ...optional('internal_urls', internalUrlsAfter(caller, undefined, fields.urls)),
      allowed_ips: fields.allowed_ips ?? [],
      signing: { enabled: false },
      features: { payments: false, event_bridge: false, event_receiver: false, ...fields.features },
    };
    return write(platform, async (tx) => {
      await checkHostapps(platform, tx, hostapps);
      const row = await insertOrRefuse(platform, tx, 'miniapp', app_id, settings);
      for (const clientId of hostapps) await platform.store.partners.link(tx, app_id, clientId);
      const credential = await issue(platform, tx, row, 'secret_key');
      await platform.store.partners.audit(tx, {
        actor: caller.actor,
        action: 'create',
        partner_type: 'miniapps',
        partner_id: app_id,
        changes: [
          ...changesBetween(undefined, { ...settings, hostapps }),
          { field: `credential.${credential.credential_id}`, before: null, after: '"active secret_key"' },
        ],
      });
      return { miniapp: miniappView(row, [...hostapps].sort()), credential };
    });
  },
};

/** `{ [name]: value }`, or nothing when value is undefined (settings never hold an undefined member). */
function optional<Name extends string, T>(name: Name, value: T | undefined): Partial<Record<Name, T>> {
  return value === undefined ? {} : ({ [name]: value } as Record<Name, T>);
}
