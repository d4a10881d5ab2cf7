import { ApiError } from '../../contract/errors.js';
import type { Hostapp, Miniapp, Partner, Registry } from '../registry/registry.js';

/**
 * The miniapp and host app of a payment operation, checked the same way for E1, E2 and E5: both
 * registered, the miniapp runs in the host app, and both enabled the payment feature.
 */
export function paymentParties(registry: Registry, caller: Partner | undefined, otherId: string): { miniapp: Miniapp; hostapp: Hostapp } {
  if (!caller) throw new Error('payment operations have an authenticated caller');
  const miniapp = caller.kind === 'miniapp' ? caller : registry.miniapp(otherId);
  const hostapp = caller.kind === 'hostapp' ? caller : registry.hostapp(otherId);
  if (!miniapp) throw new ApiError('UNAUTHORIZED', `app_id ${otherId} is not a registered miniapp`);
  if (!hostapp) throw new ApiError('UNAUTHORIZED', `client_id ${otherId} is not a registered host app`);
  if (!registry.linked(miniapp, hostapp))
    throw new ApiError('UNAUTHORIZED', `miniapp ${miniapp.id} does not run in host app ${hostapp.id}`);
  if (!miniapp.features.payments) throw new ApiError('PAYMENT_DISABLED', `the payment feature is not enabled for miniapp ${miniapp.id}`);
  if (!hostapp.features.payments) throw new ApiError('PAYMENT_DISABLED', `the payment feature is not enabled for host app ${hostapp.id}`);
  return { miniapp, hostapp };
}
