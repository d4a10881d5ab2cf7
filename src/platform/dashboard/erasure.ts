import { createHmac } from 'node:crypto';
import type { components } from '../../../generated/types/platform.js';
import type { PlatformContext } from '../context.js';
import { accessible } from './access.js';
import type { DashboardCaller } from './caller.js';
import { DEV_SECRETS_KEY } from './secrets.js';

type Schemas = components['schemas'];

/**
 * Erases one host app user's personal data (ADR 0041) and audits it under the host app with a
 * keyed digest of the user id (HMAC-SHA-256 under the secrets key): the audit log shows the
 * same user erased twice as the same digest, and never the id.
 */
export async function eraseHostappUser(
  platform: PlatformContext,
  caller: DashboardCaller,
  request: Schemas['ErasureRequest'],
): Promise<Schemas['ErasureResult']> {
  await accessible(platform, caller, 'hostapp', request.client_id);
  const key = platform.config.secretsKey ?? DEV_SECRETS_KEY;
  const digest = createHmac('sha256', key).update(`erasure\u0000${request.client_id}\u0000${request.hostapp_user_id}`).digest('hex');
  // In batches, each its own transaction (ADR 0041); audited once it is complete, with what this
  // call changed. A call cut short is completed, and audited, by its repeat: erasure is idempotent.
  const counts = await platform.store.retention.eraseUser(
    request.client_id,
    request.hostapp_user_id,
    digest,
    platform.config.records.batchSize,
  );
  await platform.store.partners.transaction((tx) =>
    platform.store.partners.audit(tx, {
      actor: caller.actor,
      action: 'erase_personal_data',
      partner_type: 'hostapps',
      partner_id: request.client_id,
      changes: [
        { field: 'hostapp_user_id', before: JSON.stringify(`hmac-sha256:${digest}`), after: 'null' },
        { field: 'erased.payments', before: 'null', after: JSON.stringify(counts.payments) },
        { field: 'erased.events', before: 'null', after: JSON.stringify(counts.events) },
      ],
    }),
  );
  return { ...counts, user_digest: digest };
}
