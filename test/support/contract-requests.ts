import { resolve, type ApiName, type JsonObject, type OpenApiDocument } from '../../src/contract/documents.js';
import { stringifyLossless } from '../../src/contract/json.js';
import { operation as contractOperation } from '../../src/contract/operations.js';
import { loadLosslessDocument, namedExamples, type NamedExample } from '../../src/contract/losslessDocument.js';
import { documentedOperations, type DocumentedOperation } from '../../scripts/mock/contract-document.js';

/** Credentials the mocks accept: any well-formed value of the scheme (they check shape only). */
export const TEST_CREDENTIALS = 'dXNlcjpwYXNz'; // base64("user:pass")

export interface OperationRef {
  api: ApiName;
  operationId: string;
}

export interface BuiltRequest {
  method: string;
  /** Path and query, ready to append to a base URL. */
  target: string;
  headers: Record<string, string>;
  body?: unknown;
}

export function operationsOf(api: ApiName): DocumentedOperation[] {
  return documentedOperations(loadLosslessDocument(api));
}

export function documented(api: ApiName, operationId: string): DocumentedOperation {
  const found = operationsOf(api).find((candidate) => candidate.operationId === operationId);
  if (!found) throw new Error(`${api} has no operation ${operationId}`);
  return found;
}

/** The request body examples of an operation, in document order (lossless values). */
export function requestExamples(api: ApiName, operationId: string): NamedExample[] {
  const document = loadLosslessDocument(api);
  const body = documented(api, operationId).node.requestBody;
  if (!body) return [];
  const media = (resolve(document, body).content as JsonObject)['application/json'] as JsonObject;
  return namedExamples(document, media);
}

/** The request body schema node (unresolved) of an operation. */
export function requestSchema(api: ApiName, operationId: string): unknown {
  const document = loadLosslessDocument(api);
  const body = documented(api, operationId).node.requestBody;
  if (!body) return undefined;
  return ((resolve(document, body).content as JsonObject)['application/json'] as JsonObject).schema;
}

export interface ResolvedParameter {
  name: string;
  in: string;
  required: boolean;
  schema: JsonObject;
  example?: unknown;
}

export function parametersOf(api: ApiName, operationId: string): ResolvedParameter[] {
  const document = loadLosslessDocument(api);
  const found = documented(api, operationId);
  return [...((found.pathItem.parameters as unknown[]) ?? []), ...((found.node.parameters as unknown[]) ?? [])].map((ref) => {
    const parameter = resolve(document, ref);
    const schema = resolve(document, parameter.schema);
    const example = parameter.example ?? (schema.examples as unknown[] | undefined)?.[0] ?? schema.example;
    return { name: String(parameter.name), in: String(parameter.in), required: Boolean(parameter.required), schema, example };
  });
}

/** The Authorization header that satisfies the operation's first security alternative, if any. */
export function credentialsHeader(api: ApiName, operationId: string): Record<string, string> {
  const document = loadLosslessDocument(api);
  const requirement = contractOperation(operationId).security[0] ?? {};
  const headers: Record<string, string> = {};
  for (const name of Object.keys(requirement)) {
    const scheme = schemeOf(document, name);
    if (scheme.type === 'http' && scheme.scheme === 'basic') headers.Authorization = `Basic ${TEST_CREDENTIALS}`;
    else if (scheme.type === 'http' && scheme.scheme === 'bearer') headers.Authorization = 'Bearer test-admin-token';
    else if (scheme.type === 'apiKey' && scheme.in === 'header') headers[String(scheme.name)] = `Token ${TEST_CREDENTIALS}`;
    else throw new Error(`no test credentials for security scheme ${name}`);
  }
  return headers;
}

/** Whether the operation can be called without credentials (an empty security alternative). */
export function allowsAnonymous(operationId: string): boolean {
  const security = contractOperation(operationId).security;
  return security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
}

function schemeOf(document: OpenApiDocument, name: string): JsonObject {
  return resolve(document, (document.components.securitySchemes ?? {})[name]);
}

/**
 * A valid request for the operation: its first request body example, every required parameter
 * from its example (path, query, header) and the credentials its security asks for.
 */
export function validRequest(api: ApiName, operationId: string): BuiltRequest {
  const found = documented(api, operationId);
  let path = found.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = { ...credentialsHeader(api, operationId) };
  for (const parameter of parametersOf(api, operationId)) {
    if (!parameter.required) continue;
    if (parameter.example === undefined) throw new Error(`${operationId}: required parameter ${parameter.name} has no example`);
    const value = String(parameter.example);
    if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(value));
    else if (parameter.in === 'query') query.set(parameter.name, value);
    else if (parameter.in === 'header') headers[parameter.name] = value;
  }
  const body = requestExamples(api, operationId)[0]?.value;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const search = query.toString();
  return { method: found.method, target: search ? `${path}?${search}` : path, headers, body };
}

/** Sends a built request to a base URL; the body is written with its exact digits. */
export async function send(baseUrl: string, request: BuiltRequest, rawBody?: string): Promise<Response> {
  const body = rawBody ?? (request.body === undefined ? undefined : stringifyLossless(request.body));
  return fetch(`${baseUrl}${request.target}`, { method: request.method, headers: request.headers, body });
}
