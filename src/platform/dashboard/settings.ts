import type { components } from '../../../generated/types/platform.js';
import { decimalText } from '../../contract/json.js';
import { lifecycleSettings } from '../../contract/limits.js';
import type { Hostapp, Miniapp } from '../registry/registry.js';
import type { PartnerKind, PartnerRow } from '../store/index.js';

export type DashboardHostapp = components['schemas']['DashboardHostapp'];
export type DashboardMiniapp = components['schemas']['DashboardMiniapp'];
/** What a partner row's `settings` column holds: the dashboard view without ids, links and times. */
export type HostappSettings = Omit<DashboardHostapp, 'client_id' | 'created_at' | 'updated_at'>;
export type MiniappSettings = Omit<DashboardMiniapp, 'app_id' | 'hostapps' | 'created_at' | 'updated_at'>;
export type PartnerType = components['schemas']['PartnerType'];

export const kindOf = (type: PartnerType): PartnerKind => (type === 'hostapps' ? 'hostapp' : 'miniapp');
export const typeOf = (kind: PartnerKind): PartnerType => (kind === 'hostapp' ? 'hostapps' : 'miniapps');

const nameOf = (name: string | undefined, id: string) => (name && name.length > 0 ? name : id).slice(0, 200);

/** A file-registered host app's settings, as the database keeps them. */
export function hostappSettingsOf(hostapp: Hostapp): HostappSettings {
  const r = hostapp.registration;
  return {
    name: nameOf(r.name, hostapp.id),
    token_prefix: r.token_prefix,
    use_access_token: r.use_access_token,
    payment_status_method: r.payment_status_method,
    urls: { ...r.urls },
    ...internalUrlsOf(hostapp),
    allowed_ips: [...(r.allowed_ips ?? [])],
    signing: { enabled: r.signing?.enabled ?? false },
    features: { ...hostapp.features },
    ...lifecycleDefaults({ payment_lifetime_seconds: r.payment_lifetime_seconds, reconcile_after_seconds: r.reconcile_after_seconds }),
  };
}

/**
 * The payment lifecycle settings (ADR 0039) with the contract's defaults for those not given:
 * a host app registered before they existed has none on record and gets the defaults.
 */
export function lifecycleDefaults(given: {
  payment_lifetime_seconds?: unknown;
  reconcile_after_seconds?: unknown;
}): Pick<HostappSettings, 'payment_lifetime_seconds' | 'reconcile_after_seconds'> {
  const defaults = lifecycleSettings();
  return {
    payment_lifetime_seconds: wholeSeconds(given.payment_lifetime_seconds) ?? defaults.paymentLifetimeSeconds.default,
    reconcile_after_seconds: wholeSeconds(given.reconcile_after_seconds) ?? defaults.reconcileAfterSeconds.default,
  };
}

/**
 * A setting in seconds as a plain number: request bodies are read without loss, so a validated
 * integer arrives as a LosslessNumber, which the settings column must not keep as an object.
 */
function wholeSeconds(value: unknown): number | undefined {
  return value === undefined || value === null ? undefined : Number(decimalText(value));
}

export function miniappSettingsOf(miniapp: Miniapp): MiniappSettings {
  const r = miniapp.registration;
  return {
    name: nameOf(r.name, miniapp.id),
    urls: { ...r.urls },
    ...internalUrlsOf(miniapp),
    allowed_ips: [...(r.allowed_ips ?? [])],
    signing: { enabled: r.signing?.enabled ?? false },
    features: { ...miniapp.features },
  };
}

/** The registry file's exception for internal URLs (the file is the operator's; ADR 0038), when it makes one. */
// The registry keeps the names as text; they were checked against the partner's URL names
// (HostappInternalUrls / MiniappInternalUrls) when the registration was read, so `never[]` fits either.
function internalUrlsOf<P extends Hostapp | Miniapp>(partner: P): { internal_urls?: never[] } {
  return partner.internalUrls.size > 0 ? { internal_urls: [...partner.internalUrls].sort() as never[] } : {};
}

export function hostappView(row: PartnerRow): DashboardHostapp {
  const settings = row.settings as Partial<HostappSettings>;
  return {
    client_id: row.partner_id,
    ...(row.settings as HostappSettings),
    ...lifecycleDefaults(settings),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export function miniappView(row: PartnerRow, hostapps: string[]): DashboardMiniapp {
  return {
    app_id: row.partner_id,
    hostapps,
    ...(row.settings as MiniappSettings),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** Each setting that differs, as `{field, before, after}` with JSON text values (objects one level deep). */
export function changesBetween(
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown>,
): components['schemas']['AuditEntry']['changes'] {
  const changes: components['schemas']['AuditEntry']['changes'] = [];
  const text = (value: unknown) => (value === undefined ? null : JSON.stringify(value).slice(0, 4000));
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after)]);
  for (const key of [...keys].sort()) {
    const a = before?.[key];
    const b = after[key];
    const nested = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
    if ((nested(a) || a === undefined) && nested(b) && key !== 'allowed_ips') {
      const inner = changesBetween((a ?? {}) as Record<string, unknown>, b as Record<string, unknown>);
      for (const change of inner) changes.push({ ...change, field: `${key}.${change.field}` });
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      changes.push({ field: key, before: text(a), after: text(b) });
    }
  }
  return changes.slice(0, 40);
}
