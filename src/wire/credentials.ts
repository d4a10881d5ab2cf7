import { hash, timingSafeEqual } from 'node:crypto';

export interface PresentedCredentials {
  scheme: string;
  id: string;
  secret: string;
}

/** Reads `<scheme> base64(id:secret)`; undefined when the header does not have that shape. */
export function readCredentials(header: string | undefined): PresentedCredentials | undefined {
  if (!header) return undefined;
  const match = /^(\S+) +([A-Za-z0-9+/=]+)$/.exec(header.trim());
  if (!match) return undefined;
  const decoded = Buffer.from(match[2], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { scheme: match[1], id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

/** Constant-time string equality (hashing first so lengths leak nothing either). */
export function safeEqual(a: string, b: string): boolean {
  return equalsConstantTime(b)(a);
}

/**
 * safeEqual against one fixed `expected`, its hash made once: a partner's id or secret is
 * compared on every request, so only the presented value is hashed per call. One-shot hashes:
 * no Hash object per call.
 */
export function equalsConstantTime(expected: string): (presented: string) => boolean {
  const expectedDigest = hash('sha256', expected, 'buffer');
  return (presented) => timingSafeEqual(hash('sha256', presented, 'buffer'), expectedDigest);
}
