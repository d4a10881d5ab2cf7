import type { components } from '../../../generated/types/platform.js';
import { ApiError } from '../../contract/errors.js';
import { IpAllowList } from '../auth/ipAllowList.js';
import type { PlatformContext } from '../context.js';
import { credentialView, PartnerExists, type PartnerKind, type PartnerRow, type Queryable } from '../store/index.js';
import { directoryOf } from './directoryOf.js';
import { newSecretKey, newSigningSecret } from './secrets.js';
import type { HostappSettings, MiniappSettings } from './settings.js';

type Schemas = components['schemas'];
type CredentialKind = Schemas['CredentialKind'];

/** At most this many active credentials of a kind: the old and the new of a rotation. */
export const MAX_ACTIVE_PER_KIND = 2;

export function checkAllowList(entries: readonly string[] | undefined): void {
  if (!entries) return;
  try {
    new IpAllowList(entries);
  } catch (error) {
    throw new ApiError('INVALID_REQUEST', `allowed_ips: ${(error as Error).message}`);
  }
}

/** Runs a change in one transaction with its audit entry and NOTIFY, then refreshes this instance's snapshot. */
export async function write<T>(platform: PlatformContext, change: (tx: Queryable) => Promise<T>): Promise<T> {
  const result = await platform.store.partners.transaction(async (tx) => {
    const value = await change(tx);
    await platform.store.partners.announce(tx);
    return value;
  });
  await directoryOf(platform).refresh();
  return result;
}

export async function activeSigningSecrets(tx: Queryable, platform: PlatformContext, kind: PartnerKind, id: string): Promise<number> {
  const rows = await platform.store.partners.credentials(tx, kind, id);
  return rows.filter((row) => row.kind === 'signing_secret' && !row.revoked_at).length;
}

export async function issue(
  platform: PlatformContext,
  tx: Queryable,
  row: Pick<PartnerRow, 'partner_type' | 'partner_id'>,
  kind: CredentialKind,
) {
  const secret = kind === 'secret_key' ? newSecretKey() : newSigningSecret();
  const stored = await directoryOf(platform).insertCredential(tx, row, kind, secret, 'dashboard');
  return { ...credentialView(stored), secret };
}

export async function checkHostapps(platform: PlatformContext, tx: Queryable, hostapps: readonly string[]): Promise<void> {
  for (const clientId of hostapps)
    if (!(await platform.store.partners.get(tx, 'hostapp', clientId)))
      throw new ApiError('CONFLICT', `hostapps names ${clientId}, which is not a registered host app`);
}

export async function insertOrRefuse(
  platform: PlatformContext,
  tx: Queryable,
  kind: PartnerKind,
  id: string,
  settings: HostappSettings | MiniappSettings,
) {
  try {
    return await platform.store.partners.insert(tx, kind, id, settings);
  } catch (error) {
    if (error instanceof PartnerExists) throw new ApiError('CONFLICT', error.message);
    throw error;
  }
}
