import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { loadDocument } from '../contract/documents.js';

/**
 * Request signing (ADR 0004, ADR 0019), the same in both directions.
 *
 * Standard Webhooks (https://www.standardwebhooks.com/): `webhook-id`, `webhook-timestamp` (Unix
 * seconds) and `webhook-signature: v1,<base64>[ v1,<base64>]`, where base64 = HMAC-SHA256(key,
 * `<id>.<timestamp>.<raw body>`) and the key is the secret's bytes (a `whsec_` secret is
 * base64-decoded; any other registered secret is its UTF-8 bytes, shown to partners as
 * `whsec_` + base64 of them).
 *
 * Deprecated, accepted and sent until its sunset: `X-Minibridge-Timestamp` and
 * `X-Minibridge-Signature: v1=<hex>[, v1=<hex>]` over `<timestamp>.<raw body>`, keyed with the
 * secret's characters as written.
 *
 * For a GET request the raw body is the raw query string without the leading `?`.
 *
 * HMAC with node:crypto over the exact bytes rather than the `standardwebhooks` package: the
 * package decodes a Buffer body to a string before signing (bytes that are not UTF-8 collapse
 * into U+FFFD, so two different bodies could share a signature), keeps one secret per verifier
 * and a fixed tolerance. The tests verify every signature made here with that package.
 */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';
export const LEGACY_TIMESTAMP_HEADER = 'x-minibridge-timestamp';
export const LEGACY_SIGNATURE_HEADER = 'x-minibridge-signature';
/** The prefix of a Standard Webhooks secret. */
export const WHSEC_PREFIX = 'whsec_';
/** The contract's `requestSignature` scheme, read on first use (the build imports this module before it bundles the contract). */
const requestSignatureScheme = () => loadDocument('platform').components.securitySchemes?.requestSignature;

/** How far a timestamp may be from the receiver's clock, either way: `x-replay-window-seconds` of the contract's `requestSignature`. */
export function replayWindowSeconds(): number {
  return (replayWindow ??= replayWindowFromContract());
}
let replayWindow: number | undefined;

/**
 * The X-Minibridge-* scheme's deprecation (`@<Unix seconds>`, RFC 9745) and sunset (HTTP date,
 * RFC 8594), as `x-deprecated-scheme` of the contract's `requestSignature` states them (ADR 0019).
 */
export function legacySignatureDeprecation(): { deprecation: string; sunset: string } {
  return (deprecation ??= deprecationFromContract());
}
let deprecation: { deprecation: string; sunset: string } | undefined;

/** When the X-Minibridge-* scheme stops being accepted and sent, as an HTTP date. */
export function legacySignatureSunset(): string {
  return legacySignatureDeprecation().sunset;
}

function replayWindowFromContract(): number {
  const seconds = requestSignatureScheme()?.['x-replay-window-seconds'];
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds <= 0) {
    throw new Error('the contract lost x-replay-window-seconds on the requestSignature security scheme');
  }
  return seconds;
}

function deprecationFromContract(): { deprecation: string; sunset: string } {
  const stated = requestSignatureScheme()?.['x-deprecated-scheme'] as { deprecation?: unknown; sunset?: unknown } | undefined;
  if (
    typeof stated?.deprecation !== 'string' ||
    !/^@\d+$/.test(stated.deprecation) ||
    typeof stated.sunset !== 'string' ||
    Number.isNaN(Date.parse(stated.sunset))
  ) {
    throw new Error(
      'the contract lost x-deprecated-scheme (deprecation "@<Unix seconds>", sunset HTTP date) on the requestSignature security scheme',
    );
  }
  return { deprecation: stated.deprecation, sunset: stated.sunset };
}

/**
 * The answer headers for a request the receiver accepted on the deprecated scheme: signing is on
 * for the caller and the request carried no webhook-* header (verification then judged X-Minibridge-*).
 */
export function deprecatedSchemeHeaders(signingEnabled: boolean, input: SignatureInput): Record<string, string> {
  const standard = input.webhookId !== undefined || input.webhookTimestamp !== undefined || input.webhookSignature !== undefined;
  if (!signingEnabled || standard) return {};
  const { deprecation, sunset } = legacySignatureDeprecation();
  return { Deprecation: deprecation, Sunset: sunset };
}

/** What a signed request carries: the Standard Webhooks headers and, until the sunset, the deprecated ones. */
export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'X-Minibridge-Timestamp': string;
  'X-Minibridge-Signature': string;
}

export interface SignOptions {
  /** Unix seconds; now by default. */
  nowSeconds?: number;
  /** `webhook-id`: the same on every retry of one message (the platform uses the event id); a new `msg_<uuid>` by default. */
  messageId?: string;
}

/**
 * Signs a raw body with every active secret (one entry each, for rotation), in both schemes:
 * receivers that verify the Standard Webhooks headers and receivers still on the deprecated ones
 * both accept the request.
 */
export function signRequest(rawBody: string | Buffer, secrets: readonly string[], options: SignOptions = {}): SignatureHeaders {
  if (secrets.length === 0) throw new Error('signing needs at least one secret');
  const timestamp = String(options.nowSeconds ?? Math.floor(Date.now() / 1000));
  const id = options.messageId ?? newMessageId();
  if (!MESSAGE_ID.test(id)) throw new Error(`webhook-id must match ${MESSAGE_ID}: ${id}`);
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': secrets.map((secret) => `v1,${standardHmac(secret, id, timestamp, rawBody).toString('base64')}`).join(' '),
    'X-Minibridge-Timestamp': timestamp,
    'X-Minibridge-Signature': secrets.map((secret) => `v1=${legacyHmac(secret, timestamp, rawBody).toString('hex')}`).join(', '),
  };
}

/** A fresh `webhook-id`. */
export function newMessageId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}

/** The `whsec_` form of a registered secret, as a partner configures it in a Standard Webhooks verifier. */
export function standardSecret(secret: string): string {
  return secret.startsWith(WHSEC_PREFIX) ? secret : `${WHSEC_PREFIX}${Buffer.from(secret, 'utf8').toString('base64')}`;
}

/**
 * Why a registered signing secret cannot be used, or undefined: a `whsec_` secret must be
 * standard base64 of 24 to 64 bytes, as Standard Webhooks specifies (a shorter key is weak, and
 * text that is not canonical base64 would give partners' libraries a different key).
 */
export function signingSecretProblem(secret: string): string | undefined {
  if (!secret.startsWith(WHSEC_PREFIX)) return undefined;
  const encoded = secret.slice(WHSEC_PREFIX.length);
  const key = Buffer.from(encoded, 'base64');
  if (key.toString('base64') !== encoded)
    return 'a whsec_ secret must be whsec_ followed by standard base64 (A-Z, a-z, 0-9, +, /, = padding)';
  if (key.length < 24 || key.length > 64) return `a whsec_ secret must encode 24 to 64 bytes; this one encodes ${key.length}`;
  return undefined;
}

/** The signature headers of a request, as received; header names are matched in lower case. */
export interface SignatureInput {
  webhookId?: string;
  webhookTimestamp?: string;
  webhookSignature?: string;
  legacyTimestamp?: string;
  legacySignature?: string;
}

/** Reads the signature headers through a header getter (lower-case names). */
export function signatureInput(header: (lowerCaseName: string) => string | undefined): SignatureInput {
  return {
    webhookId: header(WEBHOOK_ID_HEADER),
    webhookTimestamp: header(WEBHOOK_TIMESTAMP_HEADER),
    webhookSignature: header(WEBHOOK_SIGNATURE_HEADER),
    legacyTimestamp: header(LEGACY_TIMESTAMP_HEADER),
    legacySignature: header(LEGACY_SIGNATURE_HEADER),
  };
}

export type SignatureScheme = 'standard-webhooks' | 'x-minibridge';
export type VerificationFailure = 'missing' | 'malformed' | 'stale' | 'mismatch';
/**
 * A signed message a request carries, by which a replay of it is recognised until
 * `replayExpiresAt(timestamp)`. The digest names what was signed (`<id>.<timestamp>.<body>`, or
 * `<timestamp>.<body>` on the deprecated scheme), not the signature that proved it: a message
 * signed with two secrets during a rotation is one message, and a copy carrying only the other
 * signature is the same message again (ADR 0038).
 */
export interface ReplayKey {
  digest: string;
  timestamp: number;
}
export type Verification =
  | {
      ok: true;
      scheme: SignatureScheme;
      /** The replay key of the message accepted (the first of `replayKeys`). */
      digest: string;
      timestamp: number;
      /**
       * Every signed message the request carries, the accepted one first: a request signed in
       * both schemes is also valid with either set of headers removed, so a receiver must
       * remember (and refuse a replay of) each, or a replay with the webhook-* headers stripped
       * would pass as a new X-Minibridge-signed request.
       */
      replayKeys: ReplayKey[];
    }
  | { ok: false; scheme: SignatureScheme; reason: VerificationFailure };

/**
 * The first instant (Unix milliseconds) at which a message signed at `timestampSeconds` is stale
 * on a receiver's clock, so the last instant its replay key must still be remembered. The window
 * check compares whole seconds and admits a timestamp exactly `x-replay-window-seconds` old, so
 * that second is admitted to its very last millisecond: a replay key must outlive it, or a
 * request replayed in the window's last second finds its key already expired (ADR 0038).
 */
export function replayExpiresAt(timestampSeconds: number): number {
  return (timestampSeconds + replayWindowSeconds() + 1) * 1000;
}

/**
 * Checks a request's signature against the receiver's active secrets, comparing in constant time.
 * A request carrying any `webhook-*` header is judged by Standard Webhooks alone; otherwise by
 * the deprecated scheme. The caller refuses a replay of any of `replayKeys`.
 */
export function verifyRequest(
  rawBody: string | Buffer,
  input: SignatureInput,
  secrets: readonly string[],
  nowSeconds = Math.floor(Date.now() / 1000),
): Verification {
  const standard = input.webhookId !== undefined || input.webhookTimestamp !== undefined || input.webhookSignature !== undefined;
  const checked = standard ? verifyStandard(rawBody, input, secrets, nowSeconds) : verifyLegacy(rawBody, input, secrets, nowSeconds);
  if (!checked.ok) return checked;
  const replayKeys: ReplayKey[] = [{ digest: checked.digest, timestamp: checked.timestamp }];
  // The deprecated headers beside accepted webhook-* ones name a message too, whether or not
  // they verify with the secrets active now: a copy carrying them alone must find it remembered
  // even once a secret it was signed with becomes active (a rotation under way).
  if (standard) {
    const legacy = legacyMessageKey(rawBody, input);
    if (legacy) replayKeys.push(legacy);
  }
  return { ...checked, replayKeys };
}

type Checked =
  | { ok: true; scheme: SignatureScheme; digest: string; timestamp: number }
  | { ok: false; scheme: SignatureScheme; reason: VerificationFailure };

function verifyStandard(rawBody: string | Buffer, input: SignatureInput, secrets: readonly string[], nowSeconds: number): Checked {
  const scheme = 'standard-webhooks';
  const { webhookId: id, webhookTimestamp: timestampText, webhookSignature: header } = input;
  if (!id || !timestampText || !header) return { ok: false, scheme, reason: 'missing' };
  if (!MESSAGE_ID.test(id) || !TIMESTAMP.test(timestampText)) return { ok: false, scheme, reason: 'malformed' };
  const timestamp = Number(timestampText);
  if (Math.abs(nowSeconds - timestamp) > replayWindowSeconds()) return { ok: false, scheme, reason: 'stale' };
  const offered = header
    .split(' ')
    .filter((entry) => /^v1,[A-Za-z0-9+/]{43}=$/.test(entry))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  if (offered.length === 0) return { ok: false, scheme, reason: 'malformed' };
  const matched = anyMatch(
    offered,
    secrets.map((secret) => standardHmac(secret, id, timestampText, rawBody)),
  );
  return matched
    ? { ok: true, scheme, digest: messageDigest('sw', `${id}.${timestampText}.`, rawBody), timestamp }
    : { ok: false, scheme, reason: 'mismatch' };
}

function verifyLegacy(rawBody: string | Buffer, input: SignatureInput, secrets: readonly string[], nowSeconds: number): Checked {
  const scheme = 'x-minibridge';
  const { legacyTimestamp: timestampText, legacySignature: header } = input;
  if (!timestampText || !header) return { ok: false, scheme, reason: 'missing' };
  if (!TIMESTAMP.test(timestampText)) return { ok: false, scheme, reason: 'malformed' };
  const timestamp = Number(timestampText);
  if (Math.abs(nowSeconds - timestamp) > replayWindowSeconds()) return { ok: false, scheme, reason: 'stale' };
  const offered = header
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => /^v1=[0-9a-f]{64}$/.test(entry))
    .map((entry) => Buffer.from(entry.slice(3), 'hex'));
  if (offered.length === 0) return { ok: false, scheme, reason: 'malformed' };
  const matched = anyMatch(
    offered,
    secrets.map((secret) => legacyHmac(secret, timestampText, rawBody)),
  );
  return matched
    ? { ok: true, scheme, digest: messageDigest('xm', `${timestampText}.`, rawBody), timestamp }
    : { ok: false, scheme, reason: 'mismatch' };
}

/** The deprecated scheme's message when its headers are present and well formed, verified or not. */
function legacyMessageKey(rawBody: string | Buffer, input: SignatureInput): ReplayKey | undefined {
  const { legacyTimestamp: timestampText, legacySignature: header } = input;
  if (!timestampText || !header || !TIMESTAMP.test(timestampText)) return undefined;
  return { digest: messageDigest('xm', `${timestampText}.`, rawBody), timestamp: Number(timestampText) };
}

/** SHA-256 of what a scheme signs, prefixed with the scheme: one key per message, whichever secrets signed it. */
function messageDigest(scheme: 'sw' | 'xm', signedPrefix: string, rawBody: string | Buffer): string {
  return `${scheme}:${createHash('sha256').update(signedPrefix).update(rawBody).digest('hex')}`;
}

/** Whether any offered signature equals any expected one; every comparison runs (constant time). */
function anyMatch(offered: readonly Buffer[], expected: readonly Buffer[]): boolean {
  let found = false;
  for (const candidate of expected) {
    for (const given of offered) {
      if (given.length === candidate.length && timingSafeEqual(given, candidate)) found = true;
    }
  }
  return found;
}

export function describeVerificationFailure(verification: { scheme: SignatureScheme; reason: VerificationFailure }): string {
  if (verification.scheme === 'standard-webhooks') {
    switch (verification.reason) {
      case 'missing':
        return 'the request must be signed per Standard Webhooks: webhook-id, webhook-timestamp and webhook-signature are all required';
      case 'malformed':
        return 'webhook-signature must be space-separated "v1,<base64 HMAC-SHA256>" entries, webhook-timestamp Unix seconds and webhook-id 1 to 100 letters, digits, "_" or "-"';
      case 'stale':
        return `webhook-timestamp is more than ${replayWindowSeconds()} s away from the receiver's clock`;
      case 'mismatch':
        return 'webhook-signature does not match "<webhook-id>.<webhook-timestamp>.<raw body>" with any active signing secret';
    }
  }
  switch (verification.reason) {
    case 'missing':
      return 'the request must be signed: send webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks; X-Minibridge-Timestamp and X-Minibridge-Signature are deprecated)';
    case 'malformed':
      return 'X-Minibridge-Signature must be "v1=<hex>" entries and X-Minibridge-Timestamp Unix seconds (this scheme is deprecated: sign per Standard Webhooks)';
    case 'stale':
      return `X-Minibridge-Timestamp is more than ${replayWindowSeconds()} s away from the receiver's clock`;
    case 'mismatch':
      return 'X-Minibridge-Signature does not match the body with any active signing secret';
  }
}

/** `webhook-id`: no full stop, so `<id>.<timestamp>.<body>` cannot be read two ways. */
const MESSAGE_ID = /^[A-Za-z0-9_-]{1,100}$/;
const TIMESTAMP = /^\d{1,12}$/;

/** The HMAC key of a secret in the Standard Webhooks scheme. */
function standardKey(secret: string): Buffer {
  return secret.startsWith(WHSEC_PREFIX) ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

function standardHmac(secret: string, id: string, timestamp: string, rawBody: string | Buffer): Buffer {
  return createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`).update(rawBody).digest();
}

function legacyHmac(secret: string, timestamp: string, rawBody: string | Buffer): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
}
