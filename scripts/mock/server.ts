import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IHttpNameValue, IHttpNameValues } from '@stoplight/prism-http';
import type { HttpMethod } from '@stoplight/types';
import type { ApiName, JsonObject, OpenApiDocument } from '../../src/contract/documents.js';
import { parseLossless, stringifyLossless, validationView } from '../../src/contract/json.js';
import { loadLosslessDocument } from '../../src/contract/losslessDocument.js';
import { check, operation as contractOperation } from '../../src/contract/operations.js';
import {
  documentedOperations,
  documentedResponse,
  documentedStatuses,
  type DocumentedOperation,
  type DocumentedResponse,
} from './contract-document.js';
import { createPrismGate } from './prism-gate.js';

export interface MockServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface MockOptions {
  /** Receives one line per request; defaults to stdout. */
  log?: (line: string) => void;
  /** Interface to listen on; 127.0.0.1 unless told (0.0.0.0 to reach it from containers). */
  host?: string;
}

/** What is wrong with a request, sorted by the answer it calls for. */
interface Violations {
  security: string[];
  mediaType: string[];
  other: string[];
}

interface Answer {
  status: number;
  contentType: string;
  body: unknown;
  headers: Record<string, string>;
  example?: string;
}

interface Prefer {
  code?: string;
  example?: string;
}

const VIOLATIONS_HEADER = 'X-Mock-Violations';
const EXAMPLE_HEADER = 'X-Mock-Example';
// Partner operations answer HTTP 200 in all cases and name their error answers with these keys.
const PARTNER_INVALID_EXAMPLE = 'invalidRequest';
const PARTNER_UNAUTHORIZED_EXAMPLE = 'unauthorized';
const UNAUTHORIZED = 'UNAUTHORIZED';

/**
 * Starts a mock of one API of the contract on `port` (0 picks a free one). Prism routes the
 * request and checks its security and parameters, the contract's validators check the body
 * (lossless, with the digit rules), and the answer is always one of the contract's examples:
 *
 * - platform: a valid request gets the success response's first example; an invalid one the
 *   operation's documented error status and example, its `error_message` replaced by what is
 *   really wrong (as the platform would say it); missing credentials the documented
 *   UNAUTHORIZED answer, a body that is not JSON the documented 415;
 * - hostapp, miniapp: HTTP 200 always; invalid requests get the `invalidRequest` example,
 *   missing credentials the `unauthorized` example.
 *
 * `Prefer: code=<status>, example=<name>` picks another documented answer for a valid request.
 * `X-Mock-Violations` lists what was wrong; `X-Mock-Example` names the example served.
 */
export async function startMock(api: ApiName, port: number, options: MockOptions = {}): Promise<MockServer> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const host = options.host ?? '127.0.0.1';
  const document = loadLosslessDocument(api);
  const operations = new Map(documentedOperations(document).map((found) => [found.operationId, found]));
  const gate = await createPrismGate(api);

  async function answer(request: IncomingMessage): Promise<{ answer: Answer; operationId?: string; violations: string[] }> {
    const url = new URL(request.url ?? '/', 'http://mock.invalid');
    const raw = await readBody(request);
    const parsed = parseBody(raw);
    const headers = flattenHeaders(request);
    const { prefer: preferHeader, accept: _accept, ...prismHeaders } = headers; // Prism would act on these itself
    const verdict = await gate.inspect({
      method: (request.method ?? 'GET').toLowerCase() as HttpMethod,
      url: { path: url.pathname, query: queryOf(url) },
      headers: prismHeaders,
      body: parsed.ok ? validationView(parsed.value) : undefined,
    });
    if (verdict.kind === 'noRoute') {
      const message = `No route ${request.method} ${url.pathname}`;
      return { answer: httpError(404, 'NOT_FOUND', message), violations: [message] };
    }
    if (verdict.kind === 'methodNotAllowed') {
      const message = `${url.pathname} does not allow ${request.method}; it allows ${verdict.allow.join(', ')}`;
      const refused = httpError(405, 'METHOD_NOT_ALLOWED', message);
      refused.headers.Allow = verdict.allow.join(', ');
      return { answer: refused, violations: [message] };
    }
    const documented = operations.get(verdict.operationId);
    if (!documented) throw new Error(`Prism routed to ${verdict.operationId}, which the ${api} document does not list`);
    const security = verdict.securityViolations.length > 0 ? [credentialsProblem(documented.operationId)] : [];
    const violations: Violations = { security, mediaType: [], other: [...verdict.parameterViolations] };
    checkBody(documented, headers['content-type'], raw, parsed, violations);
    const prefer = parsePrefer(preferHeader);
    const chosen =
      api === 'platform'
        ? platformAnswer(document, documented, violations, prefer)
        : partnerAnswer(document, documented, violations, prefer);
    return {
      answer: chosen,
      operationId: documented.operationId,
      violations: [...violations.security, ...violations.mediaType, ...violations.other],
    };
  }

  const server = createServer((request, response) => {
    const started = performance.now();
    answer(request)
      .catch((error: unknown) => ({
        answer: httpError(500, 'UNKNOWN_ERROR', `the mock failed: ${error instanceof Error ? error.message : String(error)}`),
        operationId: undefined,
        violations: [],
      }))
      .then(({ answer: chosen, operationId, violations }) => {
        send(response, chosen, violations);
        const example = chosen.example ? ` example=${chosen.example}` : '';
        const problems = violations.length > 0 ? ` violations: ${violations.join('; ')}` : '';
        const elapsed = (performance.now() - started).toFixed(0);
        log(
          `[mock:${api}] ${request.method} ${request.url} -> ${chosen.status} ${operationId ?? '-'}${example}${problems} (${elapsed} ms)`,
        );
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** Prism only says "Invalid security scheme used"; name the schemes the operation accepts. */
function credentialsProblem(operationId: string): string {
  const alternatives = contractOperation(operationId).security.map((requirement) => Object.keys(requirement).join(' + ') || 'none');
  return `credentials missing or not accepted (${operationId} takes ${alternatives.join(' or ')})`;
}

type ParsedBody = { ok: true; value: unknown } | { ok: false; empty: boolean; reason?: string };

function parseBody(raw: string): ParsedBody {
  if (raw.trim() === '') return { ok: false, empty: true };
  try {
    return { ok: true, value: parseLossless(raw) };
  } catch (error) {
    return { ok: false, empty: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** Judges the body with the contract's validator, as the platform does (exact digits). */
function checkBody(
  documented: DocumentedOperation,
  contentType: string | undefined,
  raw: string,
  parsed: ParsedBody,
  violations: Violations,
): void {
  const validateBody = contractOperation(documented.operationId).validateBody;
  if (!validateBody) return;
  const accepted = Object.keys(
    ((documented.node.requestBody as JsonObject | undefined)?.content as JsonObject | undefined) ?? { 'application/json': {} },
  );
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (raw.length > 0 && !accepted.includes(mediaType)) {
    violations.mediaType.push(`Content-Type ${mediaType || '(none)'} is not ${accepted.join(' or ')}`);
    return;
  }
  if (!parsed.ok) {
    violations.other.push(parsed.empty ? 'the request body is required' : `the body is not valid JSON: ${parsed.reason}`);
    return;
  }
  const verdict = check(validateBody, parsed.value);
  if (!verdict.valid) violations.other.push(verdict.message);
}

function platformAnswer(document: OpenApiDocument, documented: DocumentedOperation, violations: Violations, prefer: Prefer): Answer {
  const contract = contractOperation(documented.operationId);
  if (violations.security.length > 0) {
    const status = contract.errorStatus.get(UNAUTHORIZED);
    const response = status === undefined ? undefined : documentedResponse(document, documented, String(status));
    const example = response?.examples.find((candidate) => (candidate.value as JsonObject | undefined)?.error_code === UNAUTHORIZED);
    if (response && example) return withReason(fromExample(response, example.name), violations.security[0]!);
    return httpError(401, UNAUTHORIZED, violations.security[0]!);
  }
  if (violations.mediaType.length > 0) {
    const response = documentedResponse(document, documented, '415');
    if (response) return withReason(fromExample(response, response.examples[0]!.name), violations.mediaType[0]!);
    return invalidRequestAnswer(document, documented, violations.mediaType[0]!);
  }
  if (violations.other.length > 0) return invalidRequestAnswer(document, documented, violations.other[0]!);
  const chosen = preferredAnswer(document, documented, prefer);
  if ('problem' in chosen) {
    violations.other.push(chosen.problem);
    return invalidRequestAnswer(document, documented, chosen.problem);
  }
  return chosen;
}

/**
 * The answer to an invalid request: the operation's 422, else its 400, else its 404 (a path
 * parameter naming nothing), first example, with the real reason in `error_message`.
 */
function invalidRequestAnswer(document: OpenApiDocument, documented: DocumentedOperation, reason: string): Answer {
  for (const status of ['422', '400', '404']) {
    const response = documentedResponse(document, documented, status);
    if (!response || response.examples.length === 0) continue;
    return withReason(fromExample(response, response.examples[0]!.name), reason);
  }
  return httpError(400, 'INVALID_REQUEST', reason);
}

/** A documented error example, with `error_message` saying what is really wrong with this request. */
function withReason(answer: Answer, reason: string): Answer {
  if (isObject(answer.body) && 'error_message' in answer.body) answer.body = { ...answer.body, error_message: reason };
  return answer;
}

function partnerAnswer(document: OpenApiDocument, documented: DocumentedOperation, violations: Violations, prefer: Prefer): Answer {
  const problems = [...violations.mediaType, ...violations.other];
  if (violations.security.length === 0 && problems.length === 0) {
    const chosen = preferredAnswer(document, documented, prefer);
    if (!('problem' in chosen)) return chosen;
    violations.other.push(chosen.problem);
  }
  const response = documentedResponse(document, documented, '200');
  if (!response) throw new Error(`${documented.operationId} documents no 200 response`);
  return fromExample(response, violations.security.length > 0 ? PARTNER_UNAUTHORIZED_EXAMPLE : PARTNER_INVALID_EXAMPLE);
}

/** The success answer, or the one `Prefer` names; a problem when the contract has no such answer. */
function preferredAnswer(document: OpenApiDocument, documented: DocumentedOperation, prefer: Prefer): Answer | { problem: string } {
  const statuses = documentedStatuses(documented);
  const status = prefer.code ?? statuses.find((candidate) => candidate.startsWith('2'));
  const response = status === undefined ? undefined : documentedResponse(document, documented, status);
  if (!response) return { problem: `Prefer: code=${prefer.code}: ${documented.operationId} documents only ${statuses.join(', ')}` };
  const name = prefer.example ?? response.examples[0]?.name;
  if (name === undefined || !response.examples.some((example) => example.name === name)) {
    const known = response.examples.map((example) => example.name).join(', ') || 'none';
    return {
      problem: `Prefer: example=${name}: the ${response.status} response of ${documented.operationId} has no such example (it has ${known})`,
    };
  }
  return fromExample(response, name);
}

function fromExample(response: DocumentedResponse, name: string): Answer {
  const example = response.examples.find((candidate) => candidate.name === name);
  if (!example) throw new Error(`the ${response.status} response has no example named ${name}`);
  return {
    status: response.status,
    contentType: response.contentType ?? 'application/json',
    body: example.value,
    headers: { ...response.headers },
    example: name,
  };
}

/** An HTTP-level error (no operation to take an example from), in the contract's error shape. */
function httpError(status: number, errorCode: string, message: string): Answer {
  return { status, contentType: 'application/json', body: { error_code: errorCode, error_message: message }, headers: {} };
}

function send(response: ServerResponse, answer: Answer, violations: string[]): void {
  const text = answer.contentType.startsWith('application/json') ? stringifyLossless(answer.body) : String(answer.body);
  const headers: Record<string, string> = { ...answer.headers, 'Content-Type': answer.contentType };
  if (answer.example) headers[EXAMPLE_HEADER] = answer.example;
  if (violations.length > 0) headers[VIOLATIONS_HEADER] = headerSafe(violations.join('; '));
  response.writeHead(answer.status, headers);
  response.end(text);
}

/** `Prefer: code=400, example=unauthorized` (RFC 7240 preferences, as Prism reads them). */
function parsePrefer(header: string | undefined): Prefer {
  const prefer: Prefer = {};
  for (const part of (header ?? '').split(/[,;]/)) {
    const [key, value] = part.split('=').map((piece) => piece.trim().replace(/^"|"$/g, ''));
    if (key === 'code' && value) prefer.code = value;
    if (key === 'example' && value) prefer.example = value;
  }
  return prefer;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function flattenHeaders(request: IncomingMessage): IHttpNameValue {
  const headers: IHttpNameValue = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function queryOf(url: URL): IHttpNameValues {
  const query: IHttpNameValues = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? values[0]! : values;
  }
  return query;
}

function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 4000);
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
