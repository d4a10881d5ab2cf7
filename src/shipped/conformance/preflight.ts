import type { Exchange } from './exchange.js';
import type { OperationTarget, TargetSettings } from './targets.js';

/** One operation asked once, with the run's own credentials, before any check. */
export interface Probe {
  target: OperationTarget;
  exchange: Exchange;
  errorCode?: string;
}

/**
 * Why the run must stop before checking anything, or undefined to go on: the first operation
 * got no answer (nothing else would either), or every operation that needs credentials refused
 * them (every check would then judge a refusal).
 */
export function preflightStop(
  settings: TargetSettings & { signingSecrets: readonly string[] },
  probes: readonly Probe[],
): string | undefined {
  const first = probes[0];
  if (first && first.exchange.status === 0) {
    return [
      `cannot reach ${first.target.url} (${first.target.name}): ${first.exchange.error ?? 'no answer'}.`,
      `Nothing was checked. Start the server, or fix --url${Object.keys(settings.paths).length > 0 ? ' and --paths' : ''}.`,
    ].join('\n');
  }
  const guarded = probes.filter((probe) => probe.target.authorization !== undefined);
  if (guarded.length === 0 || !guarded.every((probe) => probe.errorCode === 'UNAUTHORIZED')) return undefined;
  const reason = guarded.map((probe) => errorMessage(probe.exchange)).find((message) => message !== undefined);
  return [
    `${settings.url} refused the credentials on every operation asked (${guarded.map((probe) => probe.target.name).join(', ')}: error_code UNAUTHORIZED${reason ? `, "${reason}"` : ''}).`,
    `Nothing else was checked. ${credentialsHint(settings)}`,
  ].join('\n');
}

function credentialsHint(settings: TargetSettings & { signingSecrets: readonly string[] }): string {
  const id = settings.credentials.id;
  const signing =
    settings.signingSecrets.length > 0
      ? ' and --signing-secret (the signing secret(s) your server verifies with, as registered)'
      : '; if the server requires signed requests, pass its signing secret with --signing-secret';
  switch (settings.subject) {
    case 'hostapp':
      return `Check --credentials <hostapp_client_id>:<hostapp_secret_key> (sent as "${settings.tokenPrefix} base64(${id}:…)"), --token-prefix (${settings.tokenPrefix} now)${signing}.`;
    case 'miniapp':
      return `Check --credentials <app_id>:<secret_key> (sent as "Basic base64(${id}:…)")${signing}.`;
    case 'platform':
      return `Check --credentials <app_id>:<secret_key> of the miniapp (${id}) and --hostapp-credentials <client_id>:<secret_key> of the linked host app, as the platform's registry has them${signing}.`;
  }
}

function errorMessage(exchange: Exchange): string | undefined {
  const json = exchange.json;
  if (json === null || typeof json !== 'object' || !('error_message' in json)) return undefined;
  const message = (json as { error_message: unknown }).error_message;
  return typeof message === 'string' ? message.slice(0, 300) : undefined;
}
