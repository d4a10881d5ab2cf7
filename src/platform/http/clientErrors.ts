import { maxHeaderSize as defaultMaxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ErrorBody } from '../../contract/errors.js';

/** A refusal Node's HTTP layer makes before any route runs, answered in the contract's shape. */
interface LayerRefusal {
  status: number;
  reason: string;
  body: ErrorBody;
}

/**
 * Answers what Node's HTTP parser refuses (headers too large, malformed requests or chunking, a
 * request not received in full within the request time-out, an Expect it cannot meet) with the contract's
 * `{error_code, error_message}` JSON and closes the connection, instead of Node's empty-bodied
 * default (ADR 0015). A connection reset is no request at all and gets no answer.
 */
export function answerClientErrors(server: Server, log: Logger): void {
  // Node answers an Expect other than 100-continue with an empty-bodied 417 unless someone listens.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body: ErrorBody = { error_code: 'INVALID_REQUEST', error_message: 'the only Expect the platform meets is 100-continue' };
    log.info({ expect: req.headers.expect }, 'HTTP-layer refusal: unmet Expect');
    const text = JSON.stringify(body);
    res.writeHead(417, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), Connection: 'close' }).end(text);
  });
  server.on('clientError', (error: Error & { code?: string; reason?: string }, socket: Duplex) => {
    const refusal = refusalFor(error, server);
    // Node only writes its own answer when no response has started on the socket: the same here.
    const started = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (!refusal || started || !socket.writable) {
      log.debug({ code: error.code }, 'connection closed by the HTTP layer');
      socket.destroy();
      return;
    }
    log.info({ code: error.code, status: refusal.status }, `HTTP-layer refusal: ${refusal.body.error_message}`);
    const text = JSON.stringify(refusal.body);
    socket.end(
      `HTTP/1.1 ${refusal.status} ${refusal.reason}\r\n` +
        'Content-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(text)}\r\n` +
        'Connection: close\r\n\r\n' +
        text,
    );
    // A client that never reads its answer does not keep the socket.
    setTimeout(() => socket.destroy(), 5_000).unref();
  });
}

function refusalFor(error: Error & { code?: string; reason?: string }, server: Server): LayerRefusal | undefined {
  switch (error.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return refusal(
        431,
        'Request Header Fields Too Large',
        'PAYLOAD_TOO_LARGE',
        `the request headers are larger than ${Math.floor(maxHeaderSize(server) / 1024)} KiB`,
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return refusal(413, 'Payload Too Large', 'PAYLOAD_TOO_LARGE', 'the chunk extensions of the body are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return refusal(
        408,
        'Request Timeout',
        'INVALID_REQUEST',
        `the request was not received in full within ${server.requestTimeout / 1000} s; send the headers and the whole body at once`,
      );
    default:
      return refusal(400, 'Bad Request', 'INVALID_REQUEST', `the request is not valid HTTP/1.1 (${describe(error)})`);
  }
}

function refusal(status: number, reason: string, code: ErrorBody['error_code'], message: string): LayerRefusal {
  return { status, reason, body: { error_code: code, error_message: message } };
}

function maxHeaderSize(server: Server): number {
  return (server as Server & { maxHeaderSize?: number }).maxHeaderSize ?? defaultMaxHeaderSize;
}

/** llhttp's reason ("Invalid character in chunk size"), without the raw bytes it may quote. */
function describe(error: Error & { code?: string; reason?: string }): string {
  const reason = (error.reason ?? error.message ?? '').replace(/[^\x20-\x7e]/g, '').slice(0, 120);
  return reason ? `${error.code ?? 'parse error'}: ${reason}` : (error.code ?? 'parse error');
}
