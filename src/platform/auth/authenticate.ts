import type { Partner } from '../registry/registry.js';
import { ApiError } from '../../contract/errors.js';
import { readCredentials } from '../../wire/credentials.js';
import { describeVerificationFailure, replayExpiresAt, verifyRequest, type SignatureInput } from '../../wire/signing.js';

export interface InboundRequest {
  authorization: string | undefined;
  /** The signature headers (Standard Webhooks, or the deprecated X-Minibridge-* ones). */
  signature: SignatureInput;
  /** The bytes that were signed: the raw body (or the raw query string of a GET). */
  signedBytes: Buffer | string;
  ip: string | undefined;
}

/**
 * Remembers accepted signed messages until their replay key expires; false when one was already
 * accepted. Its clock must be the one `nowSeconds` is read from: the window check and the key's
 * expiry then agree to the millisecond (ADR 0038).
 */
export type ReplayGuard = (digest: string, expiresAt: Date) => Promise<boolean>;

/**
 * How a partner proves itself on a platform operation (ADR 0004):
 * - `basic`: E1, E2, E5 and the miniapp event operation: `Basic base64(id:secret)`, a valid
 *   signature, or an address inside the partner's registered allow-list;
 * - `prefixed`: E8: `<prefix> base64(hostapp_client_id:hostapp_secret_key)` is required.
 * Always: a registered allow-list must contain the caller's address; enabled signing requires a
 * valid, fresh, unreplayed signature; a wrong Authorization is refused even from an allowed address.
 */
export async function authenticatePartner(
  partner: Partner,
  scheme: 'basic' | 'prefixed',
  request: InboundRequest,
  replayGuard: ReplayGuard,
  nowSeconds: number,
): Promise<void> {
  const who = `${partner.kind === 'hostapp' ? 'client_id' : 'app_id'} ${partner.id}`;
  const fromAllowedAddress = partner.allowList.size > 0 && partner.allowList.allows(request.ip);
  if (partner.allowList.size > 0 && !fromAllowedAddress) {
    throw new ApiError('UNAUTHORIZED', `requests for ${who} must come from its registered addresses`);
  }

  const expectedScheme = scheme === 'basic' ? 'Basic' : partner.kind === 'hostapp' ? partner.tokenPrefix : 'Basic';
  let credentialsGood = false;
  if (request.authorization !== undefined) {
    const presented = readCredentials(request.authorization);
    if (!presented || presented.scheme.toLowerCase() !== expectedScheme.toLowerCase()) {
      throw new ApiError('UNAUTHORIZED', `Authorization must be "${expectedScheme} base64(id:secret)"`, challenge(expectedScheme));
    }
    // Both comparisons always run, so timing does not tell which half was wrong.
    const idMatches = partner.idMatches(presented.id);
    const secretMatches = partner.secretMatches(presented.secret);
    if (!idMatches || !secretMatches) throw new ApiError('UNAUTHORIZED', `the credentials do not match ${who}`, challenge(expectedScheme));
    credentialsGood = true;
  } else if (scheme === 'prefixed') {
    throw new ApiError('UNAUTHORIZED', `Authorization "${expectedScheme} base64(client_id:secret)" is required`, challenge(expectedScheme));
  }

  let signatureGood = false;
  if (partner.signingSecrets.length > 0) {
    const verification = verifyRequest(request.signedBytes, request.signature, partner.signingSecrets, nowSeconds);
    if (!verification.ok) throw new ApiError('UNAUTHORIZED', describeVerificationFailure(verification));
    // Every signed message the request carries is remembered, whichever secrets signed it: a copy
    // with either scheme's headers removed, or with one of a rotation's two signatures, is a replay.
    for (const key of verification.replayKeys) {
      const fresh = await replayGuard(`${partner.kind}:${partner.id}:${key.digest}`, new Date(replayExpiresAt(key.timestamp)));
      if (!fresh) throw new ApiError('UNAUTHORIZED', 'this signature was already used: requests cannot be replayed');
    }
    signatureGood = true;
  }

  if (!credentialsGood && !signatureGood && !fromAllowedAddress) {
    throw new ApiError(
      'UNAUTHORIZED',
      `${who} must authenticate: send Authorization "Basic base64(id:secret)", sign the request, or call from a registered address`,
      challenge(expectedScheme),
    );
  }
}

function challenge(scheme: string): Record<string, string> {
  return { 'WWW-Authenticate': `${scheme} realm="minibridge"` };
}
