import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

// Keep-alive connections to partner servers: every E1 makes an E3 call, and opening a
// connection per call costs more than the call itself.
const agents = {
  'http:': new HttpAgent({ keepAlive: true, maxSockets: 256 }),
  'https:': new HttpsAgent({ keepAlive: true, maxSockets: 256 }),
};

export interface HttpFetchInit {
  method: string;
  headers: Headers;
  body?: string;
  /** Covers the whole exchange: the request, the answer's headers and every byte of its body. */
  signal?: AbortSignal;
  /** The most answer body bytes read (the operation's `x-max-answer-bytes`); more fails the call. */
  maxAnswerBytes: number;
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
 * The little of fetch the partner calls need, on node:http with keep-alive agents: Node 20's
 * global fetch spends several times more CPU per call. The answer is read as a stream and the
 * Response is made only once it is complete, so everything that can go wrong with an answer
 * rejects here: a connection that breaks mid-answer, the signal's time-out firing while the body
 * still trickles in, or a body past `maxAnswerBytes` (announced by Content-Length or counted as it
 * arrives). At most `maxAnswerBytes` bytes are ever held; a cut connection is destroyed, not reused.
 */
export function httpFetch(url: URL, init: HttpFetchInit): Promise<Response> {
  const secure = url.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  const headers: Record<string, string> = {};
  init.headers.forEach((value, name) => (headers[name] = value));
  if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
  const { signal, maxAnswerBytes } = init;
  return new Promise<Response>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const fail = (error: unknown) =>
      settle(() => {
        reject(error);
        request.destroy();
      });
    const onAbort = () => fail(signal!.reason);
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
        const body = status === 204 || status === 304 || init.method === 'HEAD' ? null : Buffer.concat(chunks);
        settle(() => resolve(new Response(body, { status, statusText: response.statusMessage, headers: toHeaders(response.headers) })));
      });
    });
    request.on('error', (error) => fail(Object.assign(new Error(error.message), { cause: error })));
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    request.end(init.body);
  });
}

function brokenConnection(cause?: Error): Error {
  return Object.assign(new Error('the connection closed during the answer'), { cause: { code: 'ECONNRESET', message: cause?.message } });
}

function toHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}
