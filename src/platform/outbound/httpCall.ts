import { Agent, type Dispatcher } from 'undici';
import { AddressRefused, loopbackOnlyConnector, publicOnlyConnector } from './addressPolicy.js';

// Keep-alive connections to partner servers: every E1 makes an E3 call, and opening a connection
// per call costs more than the call itself. undici's dispatcher, not node:http's ClientRequest:
// about half the CPU per call (ADR 0035). A POST is never retried by it (not idempotent), and no
// redirect is followed (no redirect interceptor): a 3xx is an answer, judged like any other.
// Its connect time-out is set past any operation's: the call's own time-out below always decides.
const connectOptions = { timeout: 120_000 };
/** Every partner URL: each new connection goes only to an address checked public (ADR 0038). */
const publicOnly = new Agent({ connections: 256, connect: publicOnlyConnector(connectOptions) });
/** A URL an operator registered on an internal address, the one explicit exception (ADR 0038). */
const operatorApproved = new Agent({ connections: 256, connect: connectOptions });
/** A partner's own loopback URL while this instance is the sandbox on loopback (ADR 0043): loopback only. */
const sandboxLoopback = new Agent({ connections: 256, connect: loopbackOnlyConnector(connectOptions) });
const agents = { public: publicOnly, 'operator-approved': operatorApproved, 'sandbox-loopback': sandboxLoopback } as const;

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
  /**
   * `public`: connect only to addresses the host resolves to that are public, checked for every
   * connection (a refusal is an AddressRefused). `operator-approved`: an operator registered
   * this URL on an internal address, which the platform then calls as written.
   * `sandbox-loopback`: a partner's loopback URL while this instance is the sandbox on loopback;
   * connect only to loopback addresses (ADR 0043).
   */
  reach: keyof typeof agents;
}

/** Where a call goes: a URL, or what the exchange reads of one. */
export type CallTarget = Pick<URL, 'origin' | 'pathname' | 'search'>;

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
 * One HTTP exchange through undici's dispatcher, at its lowest level: no fetch, Request, Response,
 * Headers or streams, which cost several times more CPU per call than the call itself. The answer
 * is handed over only once complete, so everything that can go wrong with an answer rejects here:
 * a connection that breaks mid-answer, the time-out firing while the body still trickles in (a
 * TimeoutError), or a body past `maxAnswerBytes` (announced by Content-Length or counted as it
 * arrives). At most `maxAnswerBytes` bytes are ever held; a cut exchange closes its connection.
 */
export function httpCall(url: CallTarget, init: HttpCallInit): Promise<HttpAnswer> {
  const { maxAnswerBytes } = init;
  return new Promise<HttpAnswer>((resolve, reject) => {
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let cutBeforeStart: Error | undefined;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const fail = (error: Error) =>
      settle(() => {
        reject(error);
        // Aborting the exchange closes its connection: a half-read answer is never reused.
        if (controller && !controller.aborted) controller.abort(error);
        else cutBeforeStart = error;
      });
    const timer = setTimeout(
      () => fail(new DOMException(`no complete answer within ${init.timeoutMs} ms`, 'TimeoutError')),
      init.timeoutMs,
    );
    let status = 0;
    const chunks: Buffer[] = [];
    let received = 0;
    const options: Dispatcher.DispatchOptions = {
      origin: url.origin,
      path: url.pathname + url.search,
      method: init.method as Dispatcher.HttpMethod,
      headers: init.headers,
      body: init.body ?? null,
      // The time-out above covers the whole exchange; undici's own are only a backstop.
      headersTimeout: init.timeoutMs + 1000,
      bodyTimeout: init.timeoutMs + 1000,
    };
    try {
      agents[init.reach].dispatch(options, {
        onRequestStart(started) {
          controller = started;
          if (cutBeforeStart) started.abort(cutBeforeStart);
        },
        onResponseStart(_controller, statusCode, headers) {
          status = statusCode;
          const announced = Number(headers['content-length']);
          if (Number.isFinite(announced) && announced > maxAnswerBytes) fail(new AnswerTooLargeError(maxAnswerBytes, status));
        },
        onResponseData(_controller, chunk) {
          received += chunk.length;
          if (received > maxAnswerBytes) fail(new AnswerTooLargeError(maxAnswerBytes, status));
          else chunks.push(chunk);
        },
        onResponseEnd() {
          settle(() => resolve({ status, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }));
        },
        onResponseError(_controller, error) {
          // Once the answer has begun, a failure is the connection breaking under it.
          // Closed before any answer: reported as node:http did (ECONNRESET), not as undici's UND_ERR_SOCKET.
          const closedEarly = (error as { code?: string }).code === 'UND_ERR_SOCKET';
          if (error instanceof AddressRefused) fail(error);
          else if (status === 0 && !closedEarly) fail(Object.assign(new Error(error.message), { cause: error }));
          else fail(brokenConnection(error, status === 0 ? 'before' : 'during'));
        },
      });
    } catch (error) {
      // Options undici refuses before sending (a header value with a line break, say).
      fail(Object.assign(new Error((error as Error).message), { cause: error }));
    }
  });
}

function brokenConnection(cause: Error, when: 'before' | 'during'): Error {
  return Object.assign(new Error(`the connection closed ${when} the answer`), { cause: { code: 'ECONNRESET', message: cause.message } });
}
