import { ApiError } from '../../contract/errors.js';
import type { OperationContract } from '../../contract/operations.js';
import { readCredentials, safeEqual } from '../../wire/credentials.js';
import type { SignatureInput } from '../../wire/signing.js';
import type { PlatformContext } from '../context.js';
import type { Partner, Registry } from '../registry/registry.js';
import { authenticatePartner } from './authenticate.js';

/**
 * Who must prove themselves on an operation, and how: chosen once per operation from its
 * `security` when the contract is loaded (ADR 0004, 0017, 0027), never by string checks per
 * request. Every scheme the Platform API declares maps to exactly one of these.
 * - `partner`: the party the body names (E1, E2, E5, E8, the miniapp event), with Basic
 *   credentials (`basic`), or the host app's `<prefix>` token (`prefixed`, E8);
 * - `operator`: the admin token (the admin API);
 * - `dashboard`: the admin token as an operator, or a partner's `Basic base64(id:secret_key)`;
 * - `none`: probes and other open operations.
 */
export type Authentication =
  { kind: 'none' } | { kind: 'partner'; scheme: 'basic' | 'prefixed' } | { kind: 'operator' } | { kind: 'dashboard' };

/** The schemes of the Platform API, by what each one asks for. */
const SCHEMES: Record<string, 'basic' | 'prefixed' | 'operator' | 'dashboard' | 'none'> = {
  platformBasic: 'basic',
  requestSignature: 'basic',
  hostappToken: 'prefixed',
  adminToken: 'operator',
  dashboardOperator: 'operator',
  dashboardPartner: 'dashboard',
};

export function authenticationOf(op: OperationContract): Authentication {
  const names = op.security.flatMap((requirement) => Object.keys(requirement));
  for (const name of names)
    if (!(name in SCHEMES)) throw new Error(`${op.operationId}: security scheme ${name} has no authentication in src/platform/auth`);
  const asked = new Set(names.map((name) => SCHEMES[name]));
  if (asked.has('prefixed')) return { kind: 'partner', scheme: 'prefixed' };
  if (asked.has('basic')) return { kind: 'partner', scheme: 'basic' };
  if (asked.has('dashboard')) return { kind: 'dashboard' };
  if (asked.has('operator')) return { kind: 'operator' };
  return { kind: 'none' };
}

/** What admission reads of a request, whatever carried it. */
export interface AdmissionRequest {
  authorization: string | undefined;
  /** The signature headers (Standard Webhooks, or the deprecated X-Minibridge-* ones). */
  signature: SignatureInput;
  /** The bytes that were signed: the raw body. */
  signedBytes: Buffer;
  ip: string | undefined;
  /** The party the body names, for `partner` operations. */
  callerRef: { kind: Partner['kind']; id: string } | undefined;
}

/** An admitted request: who it is (a partner, or undefined for an operator or an open operation) and its rate-limit fields. */
export interface Admitted {
  caller: Partner | undefined;
  /** The IETF RateLimit fields to answer with. */
  headers: Record<string, string>;
}

/**
 * Authenticates as the operation's authentication says, then counts the request (ADR 0017). Only
 * an authenticated request spends its partner's budget, so nobody who merely knows an app_id or
 * client_id can exhaust it; a failed authentication spends the budget of its source address
 * instead, and past that budget it is answered 429. Correct credentials are never refused for
 * what others sent from the same address. Refusals are ApiErrors carrying their headers.
 */
export async function admit(
  platform: PlatformContext,
  authentication: Authentication,
  registry: Registry,
  request: AdmissionRequest,
): Promise<Admitted> {
  if (authentication.kind === 'none') return { caller: undefined, headers: {} };
  let caller: Partner | undefined;
  try {
    if (authentication.kind === 'partner') caller = await authenticateNamedPartner(platform, registry, authentication.scheme, request);
    else if (authentication.kind === 'dashboard' && !/^Bearer /i.test(request.authorization ?? ''))
      caller = authenticateDashboardPartner(registry, request);
    else authenticateOperator(platform, request);
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'UNAUTHORIZED') throw error;
    const source = `source:${request.ip ?? 'unknown'}`;
    const decision = await platform.rateLimiters.failedAuthentication.take(source);
    if (!decision.allowed) {
      const { perSecond } = platform.rateLimiters.failedAuthentication.budget;
      throw new ApiError(
        'RATE_LIMITED',
        `more than ${perSecond} failed authentications per second from ${request.ip ?? 'this address'}; check the credentials, then retry after ${decision.retryAfterSeconds} s`,
        decision.headers,
      );
    }
    throw new ApiError('UNAUTHORIZED', error.message, { ...decision.headers, ...error.headers });
  }
  const limitKey = caller ? `${caller.kind}:${caller.id}` : 'admin';
  const decision = await platform.rateLimiters.partner.take(limitKey);
  if (!decision.allowed) {
    const { perSecond } = platform.rateLimiters.partner.budget;
    throw new ApiError(
      'RATE_LIMITED',
      `more than ${perSecond} requests per second from ${caller?.id ?? 'the admin token'}; retry after ${decision.retryAfterSeconds} s`,
      decision.headers,
    );
  }
  return { caller, headers: decision.headers };
}

/** The partner the body names, from the one snapshot of the request (ADR 0028), proven as ADR 0004 says. */
async function authenticateNamedPartner(
  platform: PlatformContext,
  registry: Registry,
  scheme: 'basic' | 'prefixed',
  request: AdmissionRequest,
): Promise<Partner> {
  const ref = request.callerRef;
  if (!ref) throw new Error('a partner operation names its caller in the body');
  const partner = ref.kind === 'hostapp' ? registry.hostapp(ref.id) : registry.miniapp(ref.id);
  if (!partner) throw new ApiError('UNAUTHORIZED', `${ref.kind === 'hostapp' ? 'client_id' : 'app_id'} ${ref.id} is not registered`);
  await authenticatePartner(
    partner,
    scheme,
    { authorization: request.authorization, signature: request.signature, signedBytes: request.signedBytes, ip: request.ip },
    (digest, expiresAt) => platform.store.replayGuard.remember(digest, expiresAt),
    // The replay guard's clock: the window check and the guard's expiry read one time (ADR 0038).
    Math.floor(platform.store.replayGuard.now().getTime() / 1000),
  );
  return partner;
}

/**
 * A partner signing in to the Dashboard API (ADR 0027): `Basic base64(id:secret_key)` with any
 * active secret_key, from inside its allow-list when it has one. Request signatures are not
 * asked for: the dashboard is used from a browser. An id registered both as a host app and as a
 * miniapp is whichever the secret belongs to.
 */
function authenticateDashboardPartner(registry: Registry, request: AdmissionRequest): Partner {
  const challenge = { 'WWW-Authenticate': 'Basic realm="minibridge-dashboard"' };
  const presented = readCredentials(request.authorization);
  if (!presented || presented.scheme.toLowerCase() !== 'basic')
    throw new ApiError('UNAUTHORIZED', 'sign in with "Bearer <admin token>" or "Basic base64(id:secret_key)"', challenge);
  const candidates = [registry.hostapp(presented.id), registry.miniapp(presented.id)];
  // Both kinds are checked, with the same work for an id not registered as that kind (a decoy
  // check), so timing tells neither which kinds an id is registered as nor whether it exists.
  const matches = candidates.map((partner) => registry.secretMatchesOrDecoy(partner, presented.secret));
  const partner = candidates.find((candidate, index) => candidate !== undefined && matches[index]);
  if (!partner) throw new ApiError('UNAUTHORIZED', 'the credentials do not match a registered partner', challenge);
  if (partner.allowList.size > 0 && !partner.allowList.allows(request.ip))
    throw new ApiError('UNAUTHORIZED', `requests for ${partner.id} must come from its registered addresses`, challenge);
  return partner;
}

function authenticateOperator(platform: PlatformContext, request: AdmissionRequest): void {
  const challenge = { 'WWW-Authenticate': 'Bearer realm="minibridge-admin"' };
  if (!platform.config.adminToken)
    throw new ApiError('UNAUTHORIZED', 'the admin API is off: set MINIBRIDGE_ADMIN_TOKEN to turn it on', challenge);
  const match = /^Bearer (.+)$/.exec(request.authorization ?? '');
  if (!match || !safeEqual(match[1], platform.config.adminToken))
    throw new ApiError('UNAUTHORIZED', 'Authorization "Bearer <admin token>" is missing or wrong', challenge);
}
