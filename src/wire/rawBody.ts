import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { InboundRefusal, readInboundBody } from '../contract/inboundJson.js';
import type { OperationContract } from '../contract/operations.js';
import { ApiError, invalidInputCode } from '../contract/errors.js';
import { maxBodyBytes } from '../contract/limits.js';

/**
 * Reads a JSON body of a platform operation through the one inbound reader (ADR 0015), refusing
 * what is not JSON with the contract's codes: 415 for another media type or charset, 413 past
 * the limit, and the operation's invalid-input code for bytes that are not UTF-8 JSON, a
 * repeated or `__proto__` member, or a body the operation's schema refuses.
 */
export async function readJsonBody(req: Request, op: OperationContract): Promise<{ raw: Buffer; value: unknown }> {
  const type = req.headers['content-type'] ?? '';
  // What nearly every partner sends needs no parsing.
  if (type !== 'application/json') refuseMediaType(type);
  let raw: Buffer;
  try {
    raw = await readBodyBytes(req);
  } catch (error) {
    if (error instanceof BodyTooLarge) throw tooLarge(req);
    throw error;
  }
  try {
    return { raw, value: readInboundBody(op, raw) };
  } catch (error) {
    if (error instanceof InboundRefusal) throw new ApiError(invalidInputCode(op), error.message);
    throw error;
  }
}

/** Throws UNSUPPORTED_MEDIA_TYPE unless `type` is JSON in UTF-8 (charset absent, `utf-8` or `utf8`). */
function refuseMediaType(type: string): void {
  const [mediaType, ...parameters] = type.split(';').map((part) => part.trim().toLowerCase());
  if (mediaType !== 'application/json') {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, not ${type || 'absent'}`);
  }
  const charset = parameters
    .find((parameter) => parameter.startsWith('charset='))
    ?.slice(8)
    .replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `JSON must be UTF-8, not ${charset}`);
  }
}

/** The body is larger than the contract's `x-max-body-bytes`; the rest of it has not been read. */
export class BodyTooLarge extends Error {
  constructor() {
    super(`the body is larger than ${describeBytes(maxBodyBytes())}`);
  }
}

/** A byte count as people write it: `1 MiB`, `64 KiB`, or bytes when it is neither. */
export function describeBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The client went away before its body was complete (it closed the connection, or the server cut
 * it for sending too slowly). Nobody is left to answer: it is logged as an abort, not a failure.
 */
export class ClientAborted extends Error {}

/**
 * The body's bytes, at most `x-max-body-bytes` (a larger declared Content-Length is refused before
 * reading). Rejects with BodyTooLarge past the limit and ClientAborted when the connection closes
 * first. How long a body may take is bounded by the server's request time-out (server.ts).
 * Shared by the platform and the partner kit.
 */
export function readBodyBytes(req: IncomingMessage): Promise<Buffer> {
  const limit = maxBodyBytes();
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(new BodyTooLarge());
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stop();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onAbort = () => {
      stop();
      reject(new ClientAborted('the client closed the connection before its body was complete'));
    };
    // 'end' comes before 'close' for a complete body; a 'close' alone means the body never ended.
    const onClose = () => {
      if (!req.complete) onAbort();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}

/**
 * How much of a refused body the platform still reads and throws away, and for how long: a client
 * that writes its whole body before reading reads the 413 only if the connection stays open
 * until it has finished writing. Past either bound the connection is closed (ADR 0010).
 */
export function discardLimitBytes(): number {
  return 16 * maxBodyBytes();
}
const DISCARD_TIME_MS = 10_000;

function tooLarge(req: Request): ApiError {
  discardRest(req);
  return new ApiError('PAYLOAD_TOO_LARGE', new BodyTooLarge().message);
}

/** Reads what is left of a refused body into nothing, within the bounds above. */
function discardRest(req: Request): void {
  if (req.complete) return;
  const limit = discardLimitBytes();
  let discarded = 0;
  const close = () => req.socket.destroy();
  const timer = setTimeout(close, DISCARD_TIME_MS).unref();
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limit) close();
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}
