import type { Exchange } from './exchange.js';
import { otherParty, type OperationTarget, type TargetSettings } from './targets.js';

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
  const unknownId = unknownPartnerStop(settings, guarded);
  if (unknownId) return unknownId;
  if (guarded.length === 0 || !guarded.every((probe) => probe.errorCode === 'UNAUTHORIZED')) return undefined;
  const reason = guarded.map((probe) => errorMessage(probe.exchange)).find((message) => message !== undefined);
  return [
    `${settings.url} refused the credentials on every operation asked (${guarded.map((probe) => probe.target.name).join(', ')}: error_code UNAUTHORIZED${reason ? `, "${reason}"` : ''}).`,
    `Nothing else was checked. ${credentialsHint(settings)}`,
  ].join('\n');
}

/** Error codes a server answers a partner it does not know with, besides UNAUTHORIZED (which may also mean wrong credentials). */
const UNKNOWN_PARTNER_CODES = /FORBIDDEN|UNKNOWN|NOT_FOUND|NOT_REGISTERED|NOT_ALLOWED|INVALID_(APP|CLIENT|MINIAPP|HOSTAPP|PARTNER)/i;

/**
 * A server that knows only its own partners refuses the contract's example id the kit names by
 * default (a host app a miniapp `ma_7f3c2a` it never heard of): every check would then judge that
 * refusal. One message naming the flag instead, when the id was not given and every operation
 * asked refused, either naming the id or with an unknown-partner code.
 */
function unknownPartnerStop(settings: TargetSettings, guarded: readonly Probe[]): string | undefined {
  const other = otherParty(settings);
  if (!other || other.given || guarded.length === 0 || !guarded.every((probe) => probe.errorCode !== undefined)) return undefined;
  const namesId = guarded.some((probe) => errorMessage(probe.exchange)?.includes(other.id));
  const unknownCodes = guarded.every((probe) => UNKNOWN_PARTNER_CODES.test(probe.errorCode!));
  if (!namesId && !unknownCodes) return undefined;
  const first = guarded.find((probe) => errorMessage(probe.exchange)?.includes(other.id)) ?? guarded[0]!;
  const message = errorMessage(first.exchange);
  const party = settings.subject === 'hostapp' ? 'miniapp' : 'host app';
  return [
    `${settings.url} refused the ${party} the kit names by default (${other.field} ${other.id}, the contract's example) on every operation asked (${guarded.map((probe) => `${probe.target.name}: error_code ${probe.errorCode}`).join(', ')}${message ? `; "${message}"` : ''}).`,
    `Nothing else was checked. Pass the ${party} your server knows with ${other.flag} <${settings.subject === 'hostapp' ? 'app_id' : 'client_id'}>, e.g. ${other.flag} ${settings.subject === 'hostapp' ? 'ma_sandbox' : 'ha_sandbox'} for the sandbox's.`,
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
      return `Check --credentials <hostapp_client_id>:<hostapp_secret_key> (sent as "${settings.tokenPrefix} base64(${id}:…)"), --token-prefix (${settings.tokenPrefix} now)${signing}.${unknownIdHint(settings)}`;
    case 'miniapp':
      return `Check --credentials <app_id>:<secret_key> (sent as "Basic base64(${id}:…)")${signing}.${unknownIdHint(settings)}`;
    case 'platform':
      return `Check --credentials <app_id>:<secret_key> of the miniapp (${id}) and --hostapp-credentials <client_id>:<secret_key> of the linked host app, as the platform's registry has them${signing}.`;
  }
}

/** The flag to try when the credentials are right but the server does not know the partner the requests name. */
function unknownIdHint(settings: TargetSettings): string {
  const other = otherParty(settings);
  if (!other || other.given) return '';
  return ` If your server refuses requests naming a ${settings.subject === 'hostapp' ? 'miniapp' : 'host app'} it does not know, pass its id with ${other.flag} (the kit sends ${other.id}).`;
}

function errorMessage(exchange: Exchange): string | undefined {
  const json = exchange.json;
  if (json === null || typeof json !== 'object' || !('error_message' in json)) return undefined;
  const message = (json as { error_message: unknown }).error_message;
  return typeof message === 'string' ? message.slice(0, 300) : undefined;
}
