import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Minibridge request signing (ADR 0004), the same in both directions:
 * `X-Minibridge-Signature: v1=<hex>[, v1=<hex>]` where hex = HMAC-SHA256(secret,
 * `<timestamp>.<raw body>`) and `X-Minibridge-Timestamp` is Unix seconds. For a GET request the
 * raw body is the raw query string without the leading `?`.
 */
export const TIMESTAMP_HEADER = 'x-minibridge-timestamp';
export const SIGNATURE_HEADER = 'x-minibridge-signature';
/** How far a timestamp may be from the receiver's clock, either way. */
export const REPLAY_WINDOW_SECONDS = 300;

export interface SignatureHeaders {
  'X-Minibridge-Timestamp': string;
  'X-Minibridge-Signature': string;
}

/** Signs a raw body with every active secret (one `v1=` entry each, for rotation). */
export function signRequest(rawBody: string | Buffer, secrets: readonly string[], nowSeconds = Math.floor(Date.now() / 1000)): SignatureHeaders {
  if (secrets.length === 0) throw new Error('signing needs at least one secret');
  const timestamp = String(nowSeconds);
  const entries = secrets.map((secret) => `v1=${hmac(secret, timestamp, rawBody)}`);
  return { 'X-Minibridge-Timestamp': timestamp, 'X-Minibridge-Signature': entries.join(', ') };
}

export type VerificationFailure = 'missing' | 'malformed' | 'stale' | 'mismatch';
export type Verification = { ok: true; digest: string; timestamp: number } | { ok: false; reason: VerificationFailure };

/**
 * Checks a signature against the receiver's active secrets, in constant time per comparison.
 * `digest` identifies the accepted signature so the caller can refuse a replay of it.
 */
export function verifyRequest(
  rawBody: string | Buffer,
  timestampHeader: string | undefined,
  signatureHeader: string | undefined,
  secrets: readonly string[],
  nowSeconds = Math.floor(Date.now() / 1000),
): Verification {
  if (!timestampHeader || !signatureHeader) return { ok: false, reason: 'missing' };
  if (!/^\d{1,12}$/.test(timestampHeader)) return { ok: false, reason: 'malformed' };
  const timestamp = Number(timestampHeader);
  if (Math.abs(nowSeconds - timestamp) > REPLAY_WINDOW_SECONDS) return { ok: false, reason: 'stale' };
  const offered = parseSignatureHeader(signatureHeader);
  if (offered.length === 0) return { ok: false, reason: 'malformed' };
  for (const secret of secrets) {
    const expected = Buffer.from(hmac(secret, timestampHeader, rawBody), 'hex');
    for (const candidate of offered) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) {
        return { ok: true, digest: expected.toString('hex'), timestamp };
      }
    }
  }
  return { ok: false, reason: 'mismatch' };
}

export function describeVerificationFailure(reason: VerificationFailure): string {
  switch (reason) {
    case 'missing':
      return 'the request must be signed: X-Minibridge-Timestamp and X-Minibridge-Signature are required';
    case 'malformed':
      return 'X-Minibridge-Signature must be "v1=<hex>" entries and X-Minibridge-Timestamp Unix seconds';
    case 'stale':
      return `X-Minibridge-Timestamp is more than ${REPLAY_WINDOW_SECONDS} s away from the platform clock`;
    case 'mismatch':
      return 'X-Minibridge-Signature does not match the body with any active signing secret';
  }
}

function parseSignatureHeader(header: string): Buffer[] {
  return header
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => /^v1=[0-9a-f]{64}$/.test(entry))
    .map((entry) => Buffer.from(entry.slice(3), 'hex'));
}

function hmac(secret: string, timestamp: string, rawBody: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}
