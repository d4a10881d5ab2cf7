import { pipeline, Readable } from 'node:stream';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { loadDocument, resolve } from '../../contract/documents.js';
import { stringifyLossless } from '../../contract/json.js';
import type { OperationContract } from '../../contract/operations.js';
import { ApiError, documentedError, type ErrorBody } from '../../contract/errors.js';
import { DatabaseUnavailableError } from '../store/index.js';

/**
 * The contract's limit on `error_message`; longer messages are cut to it (they embed input). Read
 * on first use: the build imports this module before it has bundled the contract.
 */
function messageLimit(): number {
  return (messageMaxLength ??= resolve<{ properties: { error_message: { maxLength: number } } }>(loadDocument('platform'), {
    $ref: '#/components/schemas/Error',
  }).properties.error_message.maxLength);
}
let messageMaxLength: number | undefined;

export function sendReply(
  res: Response,
  reply: { status?: number; body: unknown; headers?: Record<string, string>; contentType?: string },
): void {
  res.status(reply.status ?? 200);
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  // A download streamed as it is produced (a statement's CSV). In a pipeline, a failure midway
  // destroys the response, so the client never takes a truncated file for a whole one, and a
  // client that leaves stops the producer rather than leaving it paused on a page of lines.
  if (reply.contentType && reply.body instanceof Readable) {
    res.setHeader('Content-Type', reply.contentType);
    pipeline(reply.body, res, () => {});
    return;
  }
  // Text is written directly, JSON and the rest alike: res.send would hash every answer for an
  // ETag (and answer 304 to a matching If-None-Match), and no answer of the platform is
  // cacheable (each reports a state at one moment, or an error). Node sends no body to a HEAD.
  if (reply.contentType && typeof reply.body === 'string') {
    writeText(res, /;\s*charset=/i.test(reply.contentType) ? reply.contentType : `${reply.contentType}; charset=utf-8`, reply.body);
    return;
  }
  writeText(res, 'application/json; charset=utf-8', stringifyLossless(reply.body));
}

function writeText(res: Response, contentType: string, text: string): void {
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** Answers any failure with the contract's error shape; unexpected ones become UNKNOWN_ERROR. */
export function sendError(res: Response, error: unknown, op: OperationContract | undefined, log: Logger): void {
  const apiError = error instanceof ApiError ? error : unexpected(error, log);
  const { status, code, undocumented } = documentedError(apiError.code, op);
  if (res.headersSent) {
    log.error({ err: error }, 'error after the response started');
    // A partial answer is cut so the client cannot take it for whole; a complete one stays, and
    // so does its keep-alive connection, which may already carry the client's next request.
    if (!res.writableEnded) res.destroy();
    return;
  }
  if (undocumented)
    log.error(
      { err: error, error_code: undocumented, operation: op?.operationId },
      'error code the operation does not document; answered UNKNOWN_ERROR',
    );
  if (code === 'UNKNOWN_ERROR' && status === 503) res.setHeader('Retry-After', '1');
  const body: ErrorBody = { error_code: code, error_message: clip(apiError.message) };
  sendReply(res, { status, body, headers: apiError.headers });
}

function unexpected(error: unknown, log: Logger): ApiError {
  // An outage is expected and already reported once by the store (ADR 0037): one warning line
  // per request, without a stack, rather than an error with a trace for every request it fails.
  if (error instanceof DatabaseUnavailableError) {
    log.warn({ reason: error.message }, 'answered UNKNOWN_ERROR: the database is unavailable');
    return new ApiError('UNKNOWN_ERROR', `the platform cannot reach its database (${error.message}); retry in a few seconds`);
  }
  log.error({ err: error }, 'unexpected failure');
  return new ApiError('UNKNOWN_ERROR', 'something went wrong on the platform; retry later');
}

/** Cuts a message to the contract's limit, on a code point boundary, marking the cut. */
function clip(message: string): string {
  const points = [...message];
  const limit = messageLimit();
  return points.length <= limit ? message : `${points.slice(0, limit - 1).join('')}…`;
}

/**
 * The answer when answering an error failed as well (a header value Node refuses, say): the
 * headers set so far are dropped and a fixed UNKNOWN_ERROR body is written, so the client still
 * gets the contract's shape rather than an empty body or a connection left open.
 */
export function sendLastResort(res: Response, op: OperationContract | undefined): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.destroy();
    return;
  }
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  const body = JSON.stringify({ error_code: 'UNKNOWN_ERROR', error_message: 'something went wrong on the platform; retry later' });
  res.writeHead(documentedError('UNKNOWN_ERROR', op).status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
