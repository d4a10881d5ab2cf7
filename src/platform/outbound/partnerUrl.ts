import { isInternalHost, isLoopbackHost } from './addressPolicy.js';
import type { CallTarget } from './httpCall.js';

/**
 * A partner's registered URL as every call to it needs it, worked out from the text alone: where
 * the call goes and what its host is by itself. No name is resolved here; the addresses a name
 * leads to are checked as each connection opens (ADR 0038), whatever this says.
 */
export interface PartnerUrl {
  /** Where a call with a body goes: the registered origin, path and query. */
  readonly target: CallTarget;
  /** The host names a non-public address by itself (`isInternalHost`). */
  readonly internal: boolean;
  /** The host is this machine by itself (`isLoopbackHost`). */
  readonly loopback: boolean;
}

/**
 * The registered URL `text`, parsed once per text for every use (ADR 0045): each E1 calls the
 * same E3 URL, and each call asks both its reach and its target. Undefined for text that is not a
 * URL. Frozen, so no call can change what another reads.
 */
export function partnerUrl(text: string): PartnerUrl | undefined {
  if (remembered.has(text)) return remembered.get(text);
  let parsed: PartnerUrl | undefined;
  try {
    const { origin, pathname, search, hostname } = new URL(text);
    parsed = Object.freeze({
      target: Object.freeze({ origin, pathname, search }),
      internal: isInternalHost(hostname),
      loopback: isLoopbackHost(hostname),
    });
  } catch {
    parsed = undefined;
  }
  // Bounded (ADR 0045): the texts come from partners, who change their URLs as often as they like,
  // and a text once called would otherwise be kept for the life of the process. The URLs in use
  // are few (three per host app, two per miniapp), so emptying a full map costs them a parse each;
  // at most 4,096 texts of at most 2,000 characters (the contract's DashboardUrl) are held.
  if (remembered.size >= MAX_REMEMBERED_URLS) remembered.clear();
  remembered.set(text, parsed);
  return parsed;
}
const remembered = new Map<string, PartnerUrl | undefined>();
/** How many URL texts `partnerUrl` remembers at most. */
export const MAX_REMEMBERED_URLS = 4096;

/** How many URL texts `partnerUrl` remembers now: what shows the bound holds. */
export function rememberedUrls(): number {
  return remembered.size;
}

/**
 * How the platform may reach a partner's registered URL `name` (`create_order_payment`,
 * `complete_order`, …), decided for every call by what is on record and by the running instance:
 * - `operator-approved`: an operator registered it on an internal address (its name is in
 *   `approved`, and the URL still names one); called as written (ADR 0038);
 * - `sandbox-loopback`: the URL names loopback and this instance is the sandbox listening on
 *   loopback alone (`running.sandboxLoopback`, ADR 0043); connected only to loopback addresses.
 *   Nothing on record says so: the same database run as anything else reaches it as `public`,
 *   which refuses it by policy;
 * - `public`: every other URL, connected only at public addresses.
 */
export function reachOf(
  approved: ReadonlySet<string>,
  name: string,
  url: string,
  running: { sandboxLoopback: boolean },
): 'public' | 'operator-approved' | 'sandbox-loopback' {
  const host = partnerUrl(url);
  if (!host) return 'public';
  if (approved.has(name) && host.internal) return 'operator-approved';
  if (running.sandboxLoopback && host.loopback) return 'sandbox-loopback';
  return 'public';
}
