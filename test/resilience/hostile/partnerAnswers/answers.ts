/**
 * Hostile partner answers as raw HTTP: exact bytes with or without Content-Length, endless
 * streams, trickles, and JSON texts built member by member so that duplicate names,
 * prototype-named keys and odd number texts can be written as they would arrive on the wire.
 * Every writer honours back-pressure and counts the bytes it handed to the socket, so a test can
 * bound what the platform read.
 */
import type { ServerResponse } from 'node:http';
import fc from 'fast-check';

/** One JSON member as it is written: a name and the exact JSON text of its value. */
export type Member = readonly [name: string, valueText: string];

export const json = (value: unknown): string => JSON.stringify(value);

export function objectText(members: readonly Member[]): string {
  return `{${members.map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(',')}}`;
}

/** What a writer did: the bytes it handed to the socket, and whether the peer hung up first. */
export interface Written {
  bytes: number;
  cutByPeer: boolean;
}

export type AnswerWriter = (res: ServerResponse) => Promise<Written>;

/** Writes chunks with back-pressure until they run out (then ends) or the platform hangs up. */
async function pump(res: ServerResponse, chunks: Iterable<Buffer>, pauseMs = 0): Promise<Written> {
  let bytes = 0;
  let cut = false;
  const closed = new Promise<void>((resolve) => res.once('close', () => ((cut = !res.writableFinished), resolve())));
  res.on('error', () => undefined);
  for (const chunk of chunks) {
    if (cut || res.destroyed) return { bytes, cutByPeer: true };
    bytes += chunk.length;
    if (!res.write(chunk)) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), closed]);
    if (pauseMs > 0) await Promise.race([new Promise((resolve) => setTimeout(resolve, pauseMs)), closed]);
  }
  if (cut || res.destroyed) return { bytes, cutByPeer: true };
  res.end();
  return { bytes, cutByPeer: false };
}

function* slices(body: Buffer, size: number): Iterable<Buffer> {
  for (let at = 0; at < body.length; at += size) yield body.subarray(at, at + size);
}

/** HTTP 200 with exactly `body`, announced by Content-Length or chunked, in chunks of `chunkSize`. */
export function exactly(body: Buffer, framing: 'content-length' | 'chunked', chunkSize = 16 * 1024): AnswerWriter {
  return (res) => {
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(framing === 'content-length' && { 'content-length': String(body.length) }),
    });
    return pump(res, slices(body, chunkSize));
  };
}

/** HTTP 200 with `prefix` and then `filler` for ever (chunked): it ends only when the platform hangs up. */
export function endless(prefix: string, filler: string, chunkSize: number): AnswerWriter {
  const chunk = Buffer.from(filler.repeat(Math.max(1, Math.ceil(chunkSize / filler.length))));
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    return pump(
      res,
      (function* () {
        yield Buffer.from(prefix);
        for (;;) yield chunk;
      })(),
    );
  };
}

/** HTTP 200 headers at once, then `body` a few bytes at a time, `pauseMs` apart. */
export function trickle(body: string, bytesPerStep: number, pauseMs: number): AnswerWriter {
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    return pump(res, slices(Buffer.from(body), bytesPerStep), pauseMs);
  };
}

/** `text` grown to exactly `size` bytes with JSON whitespace after the opening brace (still the same JSON). */
export function paddedTo(text: string, size: number, whitespace: string): Buffer {
  const missing = size - Buffer.byteLength(text);
  if (missing < 0) throw new Error(`cannot pad ${text.length} bytes down to ${size}`);
  const pad = whitespace.repeat(Math.ceil(missing / whitespace.length)).slice(0, missing);
  return Buffer.from(`{${pad}${text.slice(1)}`);
}

/** JSON whitespace in any mix: what padding may be made of. */
export const whitespaceArb = fc.constantFrom(' ', '\n', '\t', '\r', ' \n', '\t \r\n');

/** Keys an object literal inherits or that reach its prototype: input like any other name. */
export const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'isPrototypeOf',
];
export const prototypeNameArb = fc.constantFrom(...PROTOTYPE_NAMES);

/** Any small JSON value, as text. */
export const jsonValueTextArb = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value) ?? 'null');

/**
 * Number texts JSON allows but a float cannot hold or tell apart: negative zero, overflow and
 * underflow exponents, more digits than a double keeps, trailing zeros.
 */
export const oddNumberTextArb = fc
  .record({
    negative: fc.boolean(),
    integer: fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,39}$/)),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,40}$/), { nil: undefined }),
    exponent: fc.option(fc.tuple(fc.constantFrom('e', 'E', 'e+', 'E-', 'e-'), fc.integer({ min: 0, max: 999 })), { nil: undefined }),
  })
  .map(
    ({ negative, integer, fraction, exponent }) =>
      `${negative ? '-' : ''}${integer}${fraction === undefined ? '' : `.${fraction}`}${exponent === undefined ? '' : `${exponent[0]}${exponent[1]}`}`,
  );

/** An identifier-like string (what order_payment_id, app_id and client_id look like). */
export const otherIdArb = fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/);
