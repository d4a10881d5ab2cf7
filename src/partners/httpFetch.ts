import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

// Keep-alive connections to partner servers: every E1 makes an E3 call, and opening a
// connection per call costs more than the call itself.
const agents = { 'http:': new HttpAgent({ keepAlive: true, maxSockets: 256 }), 'https:': new HttpsAgent({ keepAlive: true, maxSockets: 256 }) };

export interface HttpFetchInit {
  method: string;
  headers: Headers;
  body?: string;
  signal?: AbortSignal;
}

/**
 * The little of fetch the partner calls need, on node:http with keep-alive agents: Node 20's
 * global fetch spends several times more CPU per call. The whole answer is read before the
 * Response is made, so a connection that breaks mid-answer or a time-out rejects here.
 */
export function httpFetch(url: URL, init: HttpFetchInit): Promise<Response> {
  const secure = url.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  const headers: Record<string, string> = {};
  init.headers.forEach((value, name) => (headers[name] = value));
  if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
  return new Promise<Response>((resolve, reject) => {
    const request = send(url, { method: init.method, headers, agent: agents[secure ? 'https:' : 'http:'], signal: init.signal }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('aborted', () => reject(Object.assign(new Error('the connection closed during the answer'), { cause: { code: 'ECONNRESET' } })));
      response.on('end', () => {
        if (!response.complete) {
          reject(Object.assign(new Error('the connection closed during the answer'), { cause: { code: 'ECONNRESET' } }));
          return;
        }
        const status = response.statusCode ?? 0;
        const body = status === 204 || status === 304 || init.method === 'HEAD' ? null : Buffer.concat(chunks);
        resolve(new Response(body, { status, statusText: response.statusMessage, headers: toHeaders(response.headers) }));
      });
    });
    request.on('error', (error) => reject(init.signal?.aborted ? init.signal.reason : Object.assign(new Error(error.message), { cause: error })));
    request.end(init.body);
  });
}

function toHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}
