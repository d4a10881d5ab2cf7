import { safeEqual } from '../../wire/credentials.js';

/** Who an accepted Authorization header speaks for. */
export type Authorized = { ok: true; userAccessToken?: string } | { ok: false; reason: string };

export interface AuthorizationRule {
  /** The scheme or prefix: `Basic` for a miniapp, the token prefix (default `Token`) for a host app. */
  scheme: string;
  id: string;
  secret: string;
  /** Accepts `<scheme> <user access token>` where the operation allows it and the partner opted in. */
  acceptUserAccessToken?: (token: string) => boolean | Promise<boolean>;
}

/**
 * Checks `Authorization: <scheme> base64(id:secret)`. The decoded credentials are compared in
 * constant time; anything else in the credentials position is offered to acceptUserAccessToken
 * when there is one. The scheme is case-insensitive, as HTTP authentication schemes are.
 */
export async function checkAuthorization(header: string | undefined, rule: AuthorizationRule): Promise<Authorized> {
  if (!header) return { ok: false, reason: 'Authorization is missing' };
  const match = /^(\S+) +(\S+)$/.exec(header.trim());
  if (!match || match[1].toLowerCase() !== rule.scheme.toLowerCase()) {
    return { ok: false, reason: `Authorization must be "${rule.scheme} <credentials>"` };
  }
  const presented = match[2];
  const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(presented) ? Buffer.from(presented, 'base64').toString('utf8') : '';
  if (safeEqual(decoded, `${rule.id}:${rule.secret}`)) return { ok: true };
  if (rule.acceptUserAccessToken && (await rule.acceptUserAccessToken(presented))) return { ok: true, userAccessToken: presented };
  return {
    ok: false,
    reason: rule.acceptUserAccessToken ? 'neither the client credentials nor an accepted user access token' : 'wrong credentials',
  };
}
