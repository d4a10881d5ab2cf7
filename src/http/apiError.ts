import type { components } from '../../generated/types/platform.js';
import type { OperationContract } from '../contract/operations.js';

export type ErrorCode = components['schemas']['ErrorCode'];
export type ErrorBody = components['schemas']['Error'];

/** An error the platform answers with: the contract's error code and a message for people. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** HTTP-level errors that belong to no operation (ADR 0005). */
const HTTP_LEVEL: Partial<Record<ErrorCode, number>> = {
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
};

/**
 * The status of an error code on an operation, as the operation's documented error examples
 * say (so E1, E2 and E5 answer 400, the event operations 401/403/502, ...). Codes an operation
 * does not document fall back to its UNKNOWN_ERROR status: test/platform checks that none do.
 */
export function statusOf(code: ErrorCode, op: OperationContract | undefined): number {
  return op?.errorStatus.get(code) ?? HTTP_LEVEL[code] ?? op?.errorStatus.get('UNKNOWN_ERROR') ?? 503;
}

/** The code an operation answers malformed or schema-breaking input with: its first 400 example. */
export function invalidInputCode(op: OperationContract): ErrorCode {
  for (const [code, status] of op.errorStatus) if (status === 400) return code as ErrorCode;
  return 'INVALID_REQUEST';
}
