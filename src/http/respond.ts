import type { Response } from 'express';
import type { Logger } from 'pino';
import { stringifyLossless } from '../contract/json.js';
import type { OperationContract } from '../contract/operations.js';
import { ApiError, statusOf, type ErrorBody } from './apiError.js';

export function sendReply(res: Response, reply: { status?: number; body: unknown; headers?: Record<string, string>; contentType?: string }): void {
  res.status(reply.status ?? 200);
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  if (reply.contentType && typeof reply.body === 'string') {
    res.type(reply.contentType).send(reply.body);
  } else {
    res.type('application/json').send(stringifyLossless(reply.body));
  }
}

/** Answers any failure with the contract's error shape; unexpected ones become UNKNOWN_ERROR. */
export function sendError(res: Response, error: unknown, op: OperationContract | undefined, log: Logger): void {
  const apiError = error instanceof ApiError ? error : unexpected(error, log);
  const status = statusOf(apiError.code, op);
  if (res.headersSent) {
    log.error({ err: error }, 'error after the response started');
    res.destroy();
    return;
  }
  if (apiError.code === 'UNKNOWN_ERROR' && status === 503) res.setHeader('Retry-After', '1');
  const body: ErrorBody = { error_code: apiError.code, error_message: apiError.message };
  sendReply(res, { status, body, headers: apiError.headers });
}

function unexpected(error: unknown, log: Logger): ApiError {
  log.error({ err: error }, 'unexpected failure');
  return new ApiError('UNKNOWN_ERROR', 'something went wrong on the platform; retry later');
}
