import dns from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { buildConnector } from 'undici';

/**
 * Where the platform may connect on a partner's behalf (ADR 0038). It calls partners from inside
 * the deployment, so an address in loopback, a private network, link-local (cloud metadata at
 * 169.254.169.254), carrier-grade NAT, multicast or another non-public range would let a partner
 * make the platform call services inside its network (SSRF). The ranges are defined once, here:
 * registration (dashboard/urls.ts) refuses them written in a URL, and every connection to a
 * partner refuses them as resolved, at connect time.
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
// IPv4-mapped addresses (::ffff:a.b.c.d) need no rule of their own: BlockList judges them by the
// IPv4 rules above. NAT64's well-known prefix is judged by the IPv4 address it embeds (below).
for (const [network, prefix] of [
  // The unspecified address, loopback and the deprecated IPv4-compatible addresses (::a.b.c.d).
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  internal.addSubnet(network, prefix, 'ipv6');

/** Whether the platform may connect to `address` (an IP address, as resolved) for a partner. */
export function isPublicAddress(address: string): boolean {
  // A zone (fe80::1%eth0) is not part of the address the ranges are checked against.
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return false;
  if (family === 6 && nat64.check(bare, 'ipv6')) return isPublicAddress(embeddedIpv4(bare));
  return !internal.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/** NAT64's well-known prefix (RFC 6052): DNS64 answers an IPv4-only host as 64:ff9b::a.b.c.d. */
const nat64 = new BlockList();
nat64.addSubnet('64:ff9b::', 96, 'ipv6');

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function embeddedIpv4(address: string): string {
  const [head = '', tail = ''] = address.split('::');
  const groups = (text: string) => (text === '' ? [] : text.split(':'));
  const expand = (parts: string[]) => parts.flatMap((part) => (part.includes('.') ? dottedToGroups(part) : [part]));
  const front = expand(groups(head));
  const back = expand(groups(tail));
  const all = address.includes('::') ? [...front, ...Array(8 - front.length - back.length).fill('0'), ...back] : front;
  const [high, low] = all.slice(6).map((group) => Number.parseInt(group, 16));
  return [high! >> 8, high! & 255, low! >> 8, low! & 255].join('.');
}

function dottedToGroups(dotted: string): string[] {
  const [a, b, c, d] = dotted.split('.').map(Number);
  return [((a! << 8) | b!).toString(16), ((c! << 8) | d!).toString(16)];
}

/**
 * Whether a URL's host names a non-public address by itself, before any resolution: an IP
 * literal in the ranges above, or `localhost`, `*.localhost`, `*.local`, `*.internal` (a final dot
 * ignored, as resolvers ignore it). What a partner may not register, and what marks an operator's
 * registration as an explicit exception (ADR 0038).
 */
export function isInternalHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.+$/, '');
  if (host === '' || host === 'localhost' || /\.(localhost|local|internal)$/.test(host)) return true;
  if (isIP(host.replace(/%.*$/, '')) === 0) return false;
  return !isPublicAddress(host);
}

/**
 * Whether a URL's host is this machine by itself: `localhost`, `*.localhost` or a loopback
 * address (127.0.0.0/8, ::1, and IPv4-mapped loopback), a final dot ignored.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.+$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const family = isIP(host);
  if (family === 0) return false;
  return loopback.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * Who may register a URL naming an internal address: an operator, always, as an explicit exception
 * per URL (ADR 0038: the URL's name joins the partner's `internal_urls`); a partner only on
 * loopback, and only while the platform is a sandbox listening on loopback alone
 * (`sandboxLoopback`), where loopback is the machine of the partner who runs it (ADR 0043). The
 * partner's loopback URL is no exception on record: it is reached only while the running instance
 * is that sandbox (`reachOf`), so the same database run elsewhere refuses it by policy. Everywhere
 * else a partner's URLs are reached at public addresses only.
 */
export function mayRegisterInternal(hostname: string, by: { operator: boolean; sandboxLoopback: boolean }): boolean {
  return by.operator || (by.sandboxLoopback && isLoopbackHost(hostname));
}

/** What a refused connection reports: the same words whatever is or is not listening there. */
export const REFUSED_BY_POLICY =
  'refused by policy: the platform calls partners only at public addresses, and the registered URL does not lead to one';

/** The connection was not made: the partner's host is not, or does not resolve only to, public addresses. */
export class AddressRefused extends Error {
  override readonly name = 'AddressRefused';
  readonly code = 'EADDRREFUSEDBYPOLICY';
  constructor() {
    super(REFUSED_BY_POLICY);
  }
}

/**
 * An undici connector that resolves the host itself, refuses unless every address it resolves to
 * is `allowed`, and connects to the address it checked, never resolving again: a name that answers
 * a public address to one lookup and loopback to the next (DNS rebinding) cannot slip between the
 * check and the connection. It runs for every new connection, so a pooled keep-alive socket is
 * always one that was checked. A name that does not resolve is refused with the same words, so
 * the answer tells nothing about what exists inside.
 */
function checkedConnector(options: buildConnector.BuildOptions, allowed: (address: string) => boolean): buildConnector.connector {
  const connect = buildConnector(options);
  return (target, callback) => {
    const host = target.hostname;
    const refuse = () => callback(new AddressRefused(), null);
    if (isIP(host) !== 0) {
      if (!allowed(host)) return refuse();
      return connect(target, callback);
    }
    // `dns.lookup` as a property read at call time: getaddrinfo, as Node's own connect would use.
    dns.lookup(host, { all: true, verbatim: true }, (error, addresses) => {
      if (error || addresses.length === 0 || !addresses.every((entry) => allowed(entry.address))) return refuse();
      // The host (name:port) stays as given, so TLS still sends and verifies the name.
      connect({ ...target, hostname: addresses[0]!.address }, callback);
    });
  };
}

/** Every partner URL but the exceptions below: connections only to public addresses (ADR 0038). */
export function publicOnlyConnector(options: buildConnector.BuildOptions): buildConnector.connector {
  return checkedConnector(options, isPublicAddress);
}

/**
 * A partner's own loopback URL while the platform is the sandbox on loopback (ADR 0043):
 * connections only to loopback addresses, checked like any other partner's.
 */
export function loopbackOnlyConnector(options: buildConnector.BuildOptions): buildConnector.connector {
  return checkedConnector(options, isLoopbackHost);
}

/** The names of `urls` that name an internal address: what an operator's registration approves (ADR 0038). */
export function internalUrlNames(urls: Readonly<Record<string, string | undefined>> | undefined): string[] {
  return Object.entries(urls ?? {})
    .filter(([, url]) => {
      if (url === undefined) return false;
      try {
        return isInternalHost(new URL(url).hostname);
      } catch {
        return false;
      }
    })
    .map(([name]) => name)
    .sort();
}
