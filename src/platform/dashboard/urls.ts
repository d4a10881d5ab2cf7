import { ApiError } from '../../contract/errors.js';
import { internalUrlNames, isInternalHost, isLoopbackHost, mayRegisterInternal } from '../outbound/addressPolicy.js';
import type { DashboardCaller } from './caller.js';

/**
 * Refuses a URL holding a user name or password (it would be shown in the settings and the audit
 * log, in the clear), and a partner's URL naming a non-public address (ADR 0038: the ranges live
 * in outbound/addressPolicy.ts, shared with the check every partner call makes at connect time).
 * The WHATWG parser has already turned numeric forms (`http://2130706433/`, `0x7f.1`) into dotted
 * quads. Operators may register internal addresses, recorded per URL as their exception
 * (`internal_urls`); partners loopback ones while the platform is a sandbox on loopback
 * (`sandboxLoopback`, ADR 0043), which records nothing: the running mode alone lets them be reached.
 */
export function checkUrls(
  caller: DashboardCaller,
  urls: Record<string, string | undefined> | undefined,
  sandboxLoopback: boolean,
  ownPort: number,
): void {
  for (const [name, value] of Object.entries(urls ?? {})) {
    if (value === undefined) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new ApiError('INVALID_REQUEST', `urls.${name} is not a URL`);
    }
    if (url.username || url.password) throw new ApiError('INVALID_REQUEST', `urls.${name} must not hold a user name or password`);
    if (isInternalHost(url.hostname) && !mayRegisterInternal(url.hostname, { operator: !caller.partner, sandboxLoopback }))
      throw new ApiError('INVALID_REQUEST', refusal(name, url.hostname, sandboxLoopback));
    // A loopback URL on the platform's own port is the platform, not the partner's server: it would
    // call itself (its admin API, its own operations) with the partner's credentials (ADR 0043).
    if (caller.partner && isLoopbackHost(url.hostname) && portOf(url) === ownPort)
      throw new ApiError(
        'INVALID_REQUEST',
        `urls.${name} names the platform's own port (${ownPort}) on this machine: register the port your own server listens on`,
      );
  }
}

function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** What a partner refused an internal URL is told: why, and what to do instead. */
function refusal(name: string, hostname: string, sandboxLoopback: boolean): string {
  const why = `urls.${name} names ${hostname}, which is not a public address: register the URL the platform reaches over the internet`;
  return sandboxLoopback
    ? `${why}, or one on this machine (http://127.0.0.1:<port>/… or http://localhost:<port>/…), which this sandbox accepts`
    : `${why}. To try a server on your own machine, run the sandbox (npm start, on loopback), which accepts http://127.0.0.1 and localhost URLs; for an internal address here, ask the platform's operator to register the URL as an exception`;
}

/**
 * The URL names an exception covers after a change of `changed` (ADR 0038): a URL an operator
 * sets on an internal address joins the list, one set elsewhere leaves it, and a URL the partner
 * sets itself leaves it. A partner's loopback URL in a sandbox on loopback is no exception on
 * record (ADR 0043): it is reached only while the running instance is that sandbox (`reachOf`), so
 * a database that was a sandbox's never makes a production platform call loopback. Undefined
 * when the list is empty, so partners without an exception keep none.
 */
export function internalUrlsAfter<Name extends string>(
  caller: DashboardCaller,
  before: readonly Name[] | undefined,
  changed: Partial<Record<Name, string>> | undefined,
): Name[] | undefined {
  const names = new Set<Name>(before ?? []);
  const internalNow = new Set(internalUrlNames(changed as Record<string, string | undefined>));
  for (const name of Object.keys(changed ?? {}) as Name[]) {
    if (internalNow.has(name) && !caller.partner) names.add(name);
    else names.delete(name);
  }
  return names.size > 0 ? [...names].sort() : undefined;
}
