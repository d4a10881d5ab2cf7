import type { components } from '../../generated/types/platform.js';
import type { OperationContract } from './operations.js';

/** Every code the platform answers: the v1 catalogue, and the Dashboard API's own (CONFLICT). */
export type ErrorCode = components['schemas']['ErrorCode'] | components['schemas']['DashboardErrorCode'];
export type ErrorBody = components['schemas']['Error'] | components['schemas']['DashboardError'];

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

/** What goes on the wire for an error: a status and an error code the contract documents together. */
export interface DocumentedError {
  status: number;
  code: ErrorCode;
  /** The code that was raised, when the operation does not document it and UNKNOWN_ERROR went out instead. */
  undocumented?: ErrorCode;
}

/**
 * The status and code of an error on an operation, as the operation's documented error examples
 * say (so E1, E2 and E5 answer 400, the event operations 401/403/502, ...). A code the operation
 * does not document never reaches the wire under a guessed status: it goes out as the
 * operation's documented UNKNOWN_ERROR, and `undocumented` says so for the log. Every platform
 * operation documents UNKNOWN_ERROR, and test/platform/operations/errorStatuses.test.ts proves no code the
 * code can raise takes this path (ADR 0020). Without an operation (no route matched) only the
 * HTTP-level codes have a status.
 */
export function documentedError(code: ErrorCode, op: OperationContract | undefined): DocumentedError {
  if (!op) {
    const status = HTTP_LEVEL[code];
    return status === undefined ? { status: 503, code: 'UNKNOWN_ERROR', undocumented: code } : { status, code };
  }
  const status = op.errorStatus.get(code);
  if (status !== undefined) return { status, code };
  return { status: op.errorStatus.get('UNKNOWN_ERROR') ?? 503, code: 'UNKNOWN_ERROR', undocumented: code };
}

/**
 * The code an operation answers malformed or schema-breaking input with: its first 400 example.
 * An operation with input and no documented 400 is a contract defect the error-status test
 * reports; until fixed, documentedError sends its UNKNOWN_ERROR.
 */
export function invalidInputCode(op: OperationContract): ErrorCode {
  for (const [code, status] of op.errorStatus) if (status === 400) return code as ErrorCode;
  return 'INVALID_REQUEST';
}
