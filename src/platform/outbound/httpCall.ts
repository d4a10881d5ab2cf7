import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

// Keep-alive connections to partner servers: every E1 makes an E3 call, and opening a
// connection per call costs more than the call itself.
const agents = {
  'http:': new HttpAgent({ keepAlive: true, maxSockets: 256 }),
  'https:': new HttpsAgent({ keepAlive: true, maxSockets: 256 }),
};

export interface HttpCallInit {
  method: string;
  /** Sent as given (lower-case names); Content-Length is added for a body. */
  headers: Record<string, string>;
  /** The exact text to send, already serialised (and signed by the caller). */
  body?: string;
  /** Covers the whole exchange: the request, the answer's headers and every byte of its body. */
  timeoutMs: number;
  /** The most answer body bytes read (the operation's `x-max-answer-bytes`); more fails the call. */
  maxAnswerBytes: number;
}

/** A complete answer: its status and every byte of its body. */
export interface HttpAnswer {
  status: number;
  body: Buffer;
}

/** The partner's answer is larger than the contract allows: cut, never read to its end. */
export class AnswerTooLargeError extends Error {
  override readonly name = 'AnswerTooLargeError';
  constructor(
    readonly limit: number,
    readonly status: number,
  ) {
    super(`answered with a body larger than ${limit} bytes`);
  }
}

/**
 * One HTTP exchange on node:http with keep-alive agents: no fetch, Request, Response, Headers or
 * web streams, which cost several times more CPU per call than the call itself. The answer is
 * read as a stream and handed over only once complete, so everything that can go wrong with an
 * answer rejects here: a connection that breaks mid-answer, the time-out firing while the body
 * still trickles in (a TimeoutError), or a body past `maxAnswerBytes` (announced by
 * Content-Length or counted as it arrives). At most `maxAnswerBytes` bytes are ever held; a cut
 * connection is destroyed, not reused.
 */
export function httpCall(url: URL, init: HttpCallInit): Promise<HttpAnswer> {
  const secure = url.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  const headers = init.body === undefined ? init.headers : { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) };
  const { maxAnswerBytes } = init;
  return new Promise<HttpAnswer>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const fail = (error: unknown) =>
      settle(() => {
        reject(error);
        request.destroy();
      });
    const timer = setTimeout(
      () => fail(new DOMException(`no complete answer within ${init.timeoutMs} ms`, 'TimeoutError')),
      init.timeoutMs,
    );
    const request = send(url, { method: init.method, headers, agent: agents[secure ? 'https:' : 'http:'] }, (response) => {
      const status = response.statusCode ?? 0;
      const announced = Number(response.headers['content-length']);
      if (Number.isFinite(announced) && announced > maxAnswerBytes) {
        fail(new AnswerTooLargeError(maxAnswerBytes, status));
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > maxAnswerBytes) fail(new AnswerTooLargeError(maxAnswerBytes, status));
        else chunks.push(chunk);
      });
      response.on('error', (error) => fail(brokenConnection(error)));
      response.on('aborted', () => fail(brokenConnection()));
      response.on('end', () => {
        if (!response.complete) {
          fail(brokenConnection());
          return;
        }
        settle(() => resolve({ status, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }));
      });
    });
    request.on('error', (error) => fail(Object.assign(new Error(error.message), { cause: error })));
    request.end(init.body);
  });
}

function brokenConnection(cause?: Error): Error {
  return Object.assign(new Error('the connection closed during the answer'), { cause: { code: 'ECONNRESET', message: cause?.message } });
}
