import type { Request } from 'express';
import type { OperationContract } from '../contract/operations.js';
import { parseLossless } from '../contract/json.js';
import { ApiError, invalidInputCode } from './apiError.js';

/** The largest body the platform reads (ADR 0010). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads and parses a JSON body exactly (lossless numbers), refusing what is not JSON with the
 * contract's codes: 415 for another media type or charset, 413 past the limit, and the
 * operation's invalid-input code for bytes that are not UTF-8 JSON.
 */
export async function readJsonBody(req: Request, op: OperationContract): Promise<{ raw: Buffer; value: unknown }> {
  const type = req.headers['content-type'] ?? '';
  const [mediaType, ...parameters] = type.split(';').map((part) => part.trim().toLowerCase());
  if (mediaType !== 'application/json') {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, not ${type || 'absent'}`);
  }
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice(8).replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `JSON must be UTF-8, not ${charset}`);
  }
  const raw = await readLimited(req);
  let text: string;
  try {
    text = decoder.decode(raw);
  } catch {
    throw new ApiError(invalidInputCode(op), 'the body is not valid UTF-8');
  }
  if (text.trim() === '') throw new ApiError(invalidInputCode(op), 'the body is empty; a JSON object is required');
  let value: unknown;
  try {
    value = parseLossless(text);
  } catch (error) {
    throw new ApiError(invalidInputCode(op), `the body is not valid JSON: ${(error as Error).message}`);
  }
  // JSON can only carry U+0000 as an escape, so most bodies skip the walk.
  if (/\\u0000/i.test(text) && containsNul(value)) {
    throw new ApiError(invalidInputCode(op), 'strings must not contain the NUL character (U+0000)');
  }
  return { raw, value };
}

/** Whether any string (or key) holds U+0000, which PostgreSQL cannot store (platform.yaml, conventions). */
export function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([key, item]) => key.includes('\0') || containsNul(item));
  return false;
}

/**
 * How much of a refused body the platform still reads and throws away, and for how long: a client
 * that writes its whole body before reading reads the 413 only if the connection stays open
 * until it has finished writing. Past either bound the connection is closed (ADR 0010).
 */
export const DISCARD_LIMIT_BYTES = 16 * BODY_LIMIT_BYTES;
const DISCARD_TIME_MS = 10_000;

function readLimited(req: Request): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > BODY_LIMIT_BYTES) return Promise.reject(tooLarge(req));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        stop();
        reject(tooLarge(req));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

function tooLarge(req: Request): ApiError {
  discardRest(req);
  return new ApiError('PAYLOAD_TOO_LARGE', `the body is larger than ${BODY_LIMIT_BYTES / 1024 / 1024} MiB`);
}

/** Reads what is left of a refused body into nothing, within the bounds above. */
function discardRest(req: Request): void {
  if (req.complete) return;
  let discarded = 0;
  const close = () => req.socket.destroy();
  const timer = setTimeout(close, DISCARD_TIME_MS).unref();
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_LIMIT_BYTES) close();
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}
