import type { ErrorCode } from '../../contract/errors.js';
import { ApiError } from '../../contract/errors.js';
import type { PartnerFailure } from '../outbound/partnerCall.js';

/**
 * A failed host app call, as the miniapp server sees it (ADR 0005, 0016): time-outs (the whole
 * answer must arrive in time), refused connections and non-200 answers are HOSTAPP_UNAVAILABLE
 * (retrying helps); answers that are not JSON, are larger than the API allows or break the host
 * app API are HOSTAPP_INVALID_RESPONSE.
 */
export function hostappFailure(failure: PartnerFailure, call: string): ApiError {
  const invalid = failure.kind === 'not_json' || failure.kind === 'invalid_body' || failure.kind === 'too_large';
  const code: ErrorCode = invalid ? 'HOSTAPP_INVALID_RESPONSE' : 'HOSTAPP_UNAVAILABLE';
  const advice = code === 'HOSTAPP_UNAVAILABLE' ? '; retry later' : '';
  return new ApiError(code, `the host app server ${call}: ${failure.detail}${advice}`);
}

/**
 * An error_code the host app answered with. The one code that means the same to the caller
 * passes through (INVALID_ORDER_DATA from E3, ORDER_NOT_FOUND from E4); any other reaches the
 * miniapp server as HOSTAPP_REJECTED naming the host app's code.
 */
export function hostappRefusal(partnerCode: string, passThrough: ErrorCode, call: string): ApiError {
  if (partnerCode === passThrough) return new ApiError(passThrough, `the host app refused ${call} with error_code ${partnerCode}`);
  return new ApiError('HOSTAPP_REJECTED', `the host app refused ${call} with error_code ${partnerCode}`);
}
