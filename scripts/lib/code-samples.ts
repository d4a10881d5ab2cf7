/**
 * Request samples for every operation of the contract, made from the bundled documents: the
 * operation's method and path, its first request example, its required parameters' examples and
 * the credentials its first fillable security requirement asks for. Every sample is addressed to
 * the sandbox that `npm start` runs (sandbox partners and their public sandbox-only secrets), so
 * a reader can paste it as it is: in page order on a fresh sandbox every one succeeds, because
 * the sandbox gives what the samples create the ids later samples name (ADR 0043), which
 * test/contract/served-samples.test.ts proves on the served pages.
 *
 * The build adds them to the documents it renders as `x-codeSamples` (curl and TypeScript with
 * the package's own client); the published bundles in generated/openapi/ stay as written.
 */
import { DEFAULT_PORT } from '../../src/platform/config.js';
import { resolve, type ApiName, type JsonObject, type OpenApiDocument } from '../../src/contract/documents.js';
import { stringify } from 'lossless-json';
import { parseLossless, stringifyLossless } from '../../src/contract/json.js';
import { namedExamples } from '../../src/contract/losslessDocument.js';
import { handlers } from '../../src/platform/operations/index.js';
import {
  DEFAULT_HOSTAPP_PORT,
  DEFAULT_MINIAPP_PORT,
  SANDBOX_ADMIN_TOKEN,
  SANDBOX_HOSTAPP,
  SANDBOX_MINIAPP,
} from '../../src/tools/sandbox/startSandbox.js';
import { authorizationHeader, type ClientCredentials } from '../../src/shipped/clients/client-options.js';
import { documentedOperations, type DocumentedOperation } from '../mock/contract-document.js';

/** Where `npm start` serves each API with its defaults (PORT, MINIBRIDGE_SANDBOX_*_PORT). */
export const SANDBOX_ORIGINS: Record<ApiName, string> = {
  platform: `http://127.0.0.1:${DEFAULT_PORT}`,
  hostapp: `http://127.0.0.1:${DEFAULT_HOSTAPP_PORT}`,
  miniapp: `http://127.0.0.1:${DEFAULT_MINIAPP_PORT}`,
};

/** The request a sample makes, for tools that send it without a shell. */
export interface SampleRequest {
  method: string;
  /** Absolute URL at SANDBOX_ORIGINS[api]. */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface CodeSample {
  api: ApiName;
  operationId: string;
  request: SampleRequest;
  curl: string;
  /** A module: imports from '@minibridge/client' (ADR 0042), prints `<status> <JSON answer>`. */
  typescript: string;
}

const CLIENT_FACTORY: Record<ApiName, string> = {
  platform: 'createPlatformClient',
  hostapp: 'createHostappClient',
  miniapp: 'createMiniappClient',
};

/**
 * The example partners' identifiers, replaced by the sandbox's so that samples run as written,
 * except where a sample names the partner an earlier sample on the page created (ADR 0043).
 */
const SANDBOX_IDS: Record<string, string> = {
  app_id: SANDBOX_MINIAPP.appId,
  client_id: SANDBOX_HOSTAPP.clientId,
  hostapp_client_id: SANDBOX_HOSTAPP.clientId,
  partner_id: SANDBOX_HOSTAPP.clientId,
};

/** One sample per operation the API serves (its `paths`). */
export function codeSamples(api: ApiName, document: OpenApiDocument): CodeSample[] {
  return documentedOperations(document, 'paths').map((operation) => sampleOf(api, document, operation));
}

/**
 * A copy of the document with `x-codeSamples` on every operation, webhooks included (a partner
 * operation listed by the platform gets the sample its own API has).
 */
export function withCodeSamples(document: OpenApiDocument, samples: ReadonlyMap<string, CodeSample>): OpenApiDocument {
  const copy = structuredCopy(document);
  for (const section of ['paths', 'webhooks'] as const) {
    for (const operation of documentedOperations(copy, section)) {
      const sample = samples.get(operation.operationId);
      if (!sample) throw new Error(`no request sample for ${operation.operationId}: its API document does not serve it`);
      operation.node['x-codeSamples'] = [
        { lang: 'Shell', label: 'curl', source: sample.curl },
        { lang: 'TypeScript', label: 'TypeScript (minibridge)', source: sample.typescript },
      ];
    }
  }
  return copy;
}

function sampleOf(api: ApiName, document: OpenApiDocument, operation: DocumentedOperation): CodeSample {
  const parameters = [...asArray(operation.pathItem.parameters), ...asArray(operation.node.parameters)].map((parameter) =>
    resolve<JsonObject>(document, parameter),
  );
  const pathValues: Record<string, string> = {};
  const query: Record<string, string> = {};
  const headerParameters: Record<string, string> = {};
  for (const parameter of parameters) {
    const name = String(parameter.name);
    if (parameter.in !== 'path' && parameter.required !== true) continue;
    const example = parameterExample(document, parameter, `${operation.operationId} ${parameter.in} parameter ${name}`);
    const value = parameter.in === 'path' && namesCreatedResource(document, operation.path, name) ? example : sandboxId(name, example);
    if (parameter.in === 'path') pathValues[name] = value;
    else if (parameter.in === 'query') query[name] = value;
    else if (parameter.in === 'header') headerParameters[name] = value;
  }

  const media = (resolve<JsonObject>(document, operation.node.requestBody ?? {}).content as JsonObject | undefined)?.[
    'application/json'
  ] as JsonObject | undefined;
  const example = namedExamples(document, media)[0];
  if (media && !example) throw new Error(`${operation.operationId}: the request body has no named example to make a sample from`);
  // A request creating a partner names a new one (the example's), which later samples use.
  const body = example === undefined ? undefined : createsResource(document, operation) ? example.value : withSandboxIds(example.value);

  const credentials = sandboxCredentials(document, operation, body);
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(pathValues[name] ?? ''));
  const search = new URLSearchParams(query).toString();
  const url = `${SANDBOX_ORIGINS[api]}${path}${search ? `?${search}` : ''}`;
  const headers: Record<string, string> = {
    ...(credentials && { Authorization: authorizationHeader(credentials) }),
    ...headerParameters,
    ...(body !== undefined && { 'Content-Type': 'application/json' }),
  };
  const request: SampleRequest = { method: operation.method, url, headers, ...(body !== undefined && { body: stringifyLossless(body) }) };
  return {
    api,
    operationId: operation.operationId,
    request,
    curl: curlOf(request, credentials),
    typescript: typescriptOf(api, operation, {
      credentials,
      body,
      pathValues,
      query,
      headerParameters,
      textAnswer: answersText(document, operation),
    }),
  };
}

/** The credentials of the first security requirement the sandbox can fill (none for public operations). */
function sandboxCredentials(document: OpenApiDocument, operation: DocumentedOperation, body: unknown): ClientCredentials | undefined {
  const requirements = (operation.node.security ?? document.security ?? []) as JsonObject[];
  if (requirements.length === 0) return undefined;
  for (const requirement of requirements) {
    const schemes = Object.keys(requirement);
    if (schemes.length === 0) return undefined;
    if (schemes.length !== 1) continue;
    const filled = credentialsFor(schemes[0]!, operation, body);
    if (filled) return filled;
  }
  throw new Error(`${operation.operationId}: no security requirement the sandbox can fill (${JSON.stringify(requirements)})`);
}

function credentialsFor(scheme: string, operation: DocumentedOperation, body: unknown): ClientCredentials | undefined {
  const miniapp: ClientCredentials = { scheme: 'basic', id: SANDBOX_MINIAPP.appId, secret: SANDBOX_MINIAPP.secretKey };
  switch (scheme) {
    case 'platformBasic': {
      // The platform's own rule for who calls (the body names the caller), not a copy of it.
      const caller = (handlers as Record<string, { caller?: (body: never) => { kind: string } } | undefined>)[
        operation.operationId
      ]?.caller?.(body as never);
      if (!caller) throw new Error(`${operation.operationId} takes platformBasic but names no caller`);
      return caller.kind === 'hostapp' ? { scheme: 'basic', id: SANDBOX_HOSTAPP.clientId, secret: SANDBOX_HOSTAPP.secretKey } : miniapp;
    }
    case 'miniappBasic':
      return miniapp;
    case 'hostappToken':
      return { scheme: 'token', prefix: SANDBOX_HOSTAPP.tokenPrefix, id: SANDBOX_HOSTAPP.clientId, secret: SANDBOX_HOSTAPP.secretKey };
    case 'adminToken':
    case 'dashboardOperator':
      return { scheme: 'bearer', token: SANDBOX_ADMIN_TOKEN };
    default:
      // requestSignature and userAccessToken need a per-request signature or a user's token.
      return undefined;
  }
}

function parameterExample(document: OpenApiDocument, parameter: JsonObject, where: string): string {
  const schema = resolve<JsonObject>(document, parameter.schema ?? {});
  const examples = Object.values((parameter.examples as JsonObject | undefined) ?? {}).map(
    (example) => resolve<JsonObject>(document, example).value,
  );
  const value = parameter.example ?? examples[0] ?? schema.example ?? (schema.examples as unknown[] | undefined)?.[0];
  if (value === undefined) throw new Error(`${where} has no example to make a sample from`);
  return String(value);
}

/** A POST that answers 201 Created at a collection: it creates what `<path>/{id}` names. */
function createsResource(document: OpenApiDocument, operation: Pick<DocumentedOperation, 'method' | 'path'>): boolean {
  if (operation.method.toLowerCase() !== 'post') return false;
  const post = ((document.paths as JsonObject | undefined)?.[operation.path] as JsonObject | undefined)?.post as JsonObject | undefined;
  return post !== undefined && '201' in ((post.responses as JsonObject | undefined) ?? {});
}

/** Whether `{name}` is the id right after a collection whose create sample made it (its example's id, earlier on the page). */
function namesCreatedResource(document: OpenApiDocument, path: string, name: string): boolean {
  const marker = `/{${name}}`;
  const at = path.indexOf(marker);
  return at > 0 && path.length === at + marker.length && createsResource(document, { method: 'post', path: path.slice(0, at) });
}

function sandboxId(name: string, value: string): string {
  return SANDBOX_IDS[name] ?? value;
}

/** The example with every partner identifier replaced by the sandbox's. */
function withSandboxIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withSandboxIds);
  if (value === null || typeof value !== 'object' || value.constructor !== Object) return value;
  return Object.fromEntries(
    Object.entries(value as JsonObject).map(([key, field]) => [
      key,
      typeof field === 'string' && key in SANDBOX_IDS ? SANDBOX_IDS[key] : withSandboxIds(field),
    ]),
  );
}

function answersText(document: OpenApiDocument, operation: DocumentedOperation): boolean {
  const responses = (operation.node.responses as JsonObject | undefined) ?? {};
  const success = Object.keys(responses).find((status) => status.startsWith('2'));
  const content =
    success === undefined ? {} : ((resolve<JsonObject>(document, responses[success]).content as JsonObject | undefined) ?? {});
  return Object.keys(content).length > 0 && !Object.keys(content).some((type) => type.includes('json'));
}

function curlOf(request: SampleRequest, credentials: ClientCredentials | undefined): string {
  const lines = [`curl -s -X ${request.method} '${request.url}'`];
  for (const [name, value] of Object.entries(request.headers)) {
    // -u shows the id and secret a reader recognises; curl sends the same Basic header.
    if (name === 'Authorization' && credentials?.scheme === 'basic') lines.push(`-u '${credentials.id}:${credentials.secret}'`);
    else lines.push(`-H '${name}: ${value}'`);
  }
  if (request.body !== undefined) lines.push(`-d '${literal(parseLossless(request.body)).replace(/'/g, `'\\''`)}'`);
  return lines.join(' \\\n  ');
}

interface TypescriptParts {
  credentials: ClientCredentials | undefined;
  body: unknown;
  pathValues: Record<string, string>;
  query: Record<string, string>;
  headerParameters: Record<string, string>;
  textAnswer: boolean;
}

function typescriptOf(api: ApiName, operation: DocumentedOperation, parts: TypescriptParts): string {
  const factory = CLIENT_FACTORY[api];
  const options = [
    ...(Object.keys(parts.pathValues).length > 0 || Object.keys(parts.query).length > 0 || Object.keys(parts.headerParameters).length > 0
      ? [
          `params: ${objectLiteral({ ...(Object.keys(parts.pathValues).length > 0 && { path: parts.pathValues }), ...(Object.keys(parts.query).length > 0 && { query: parts.query }), ...(Object.keys(parts.headerParameters).length > 0 && { header: parts.headerParameters }) })}`,
        ]
      : []),
    ...(parts.body !== undefined ? [`body: ${objectLiteral(parts.body)}`] : []),
    ...(parts.textAnswer ? [`parseAs: 'text'`] : []),
  ];
  const call =
    options.length > 0
      ? `client.${operation.method}('${operation.path}', {\n  ${options.map((option) => option.replace(/\n/g, '\n  ')).join(',\n  ')},\n})`
      : `client.${operation.method}('${operation.path}')`;
  return [
    `import { ${factory} } from '@minibridge/client';`,
    '',
    `const client = ${factory}({`,
    `  baseUrl: '${SANDBOX_ORIGINS[api]}',`,
    ...(parts.credentials ? [`  credentials: ${objectLiteral(parts.credentials).replace(/\n/g, '\n  ')},`] : []),
    '});',
    `const { data, error, response } = await ${call};`,
    'console.log(response.status, JSON.stringify(data ?? error));',
    '',
  ].join('\n');
}

/** JSON with every digit kept, two-space indented (also a TypeScript object literal). */
function literal(value: unknown): string {
  const text = stringify(value, undefined, 2);
  if (text === undefined) throw new TypeError('a sample value cannot be written as JSON');
  return text;
}

/** The JSON as TypeScript writes it: keys that are identifiers lose their quotes. */
function objectLiteral(value: unknown): string {
  return literal(value).replace(/^(\s*)"([A-Za-z_$][\w$]*)": /gm, '$1$2: ');
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function structuredCopy(document: OpenApiDocument): OpenApiDocument {
  return parseLossless(stringifyLossless(document)) as OpenApiDocument;
}
