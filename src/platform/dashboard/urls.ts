import { BlockList, isIP } from 'node:net';
import { ApiError } from '../../contract/errors.js';
import type { DashboardCaller } from './caller.js';

/**
 * Addresses a partner may not point the platform at: the platform calls registered URLs from
 * inside the deployment, so a URL naming loopback, a private network, link-local (cloud
 * metadata at 169.254.169.254) or another non-public range would let a partner make the
 * platform call internal services (SSRF). Operators may still register them (the sandbox and
 * tests run partners on loopback).
 */
const internal = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  internal.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 127],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  internal.addSubnet(network, prefix, 'ipv6');

function internalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) return true;
  const family = isIP(host);
  if (family === 0) return false;
  return internal.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Refuses a URL holding a user name or password (it would be shown in the settings and the audit
 * log, in the clear), and a partner's URL naming a non-public address. The WHATWG parser has
 * already turned numeric forms (`http://2130706433/`, `0x7f.1`) into dotted quads.
 */
export function checkUrls(caller: DashboardCaller, urls: Record<string, string | undefined> | undefined): void {
  for (const [name, value] of Object.entries(urls ?? {})) {
    if (value === undefined) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new ApiError('INVALID_REQUEST', `urls.${name} is not a URL`);
    }
    if (url.username || url.password) throw new ApiError('INVALID_REQUEST', `urls.${name} must not hold a user name or password`);
    if (caller.partner && internalHost(url.hostname))
      throw new ApiError(
        'INVALID_REQUEST',
        `urls.${name} names ${url.hostname}, which is not a public address: register the URL the platform reaches over the internet`,
      );
  }
}
