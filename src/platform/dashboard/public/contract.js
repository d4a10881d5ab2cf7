// The dashboard's one way to the platform: the bundled contract the platform serves at
// /openapi/platform.json says where each operation lives (method, path, parameters), which
// credentials it takes (its security schemes) and what its request body looks like. The page
// names operations by operationId only; nothing here restates a path or a schema.

let contractPromise;

/** The bundled Platform API document, fetched once. */
export function loadContract() {
  contractPromise ??= fetch(new URL('../openapi/platform.json', location.href), { headers: { Accept: 'application/json' } }).then(
    async (response) => {
      if (!response.ok) throw new Error(`the contract could not be loaded (HTTP ${response.status})`);
      return response.json();
    },
  );
  return contractPromise;
}

/** Follows local `$ref`s (`#/components/...`) of the bundled document. */
export function deref(contract, node) {
  let current = node;
  for (let hops = 0; current && typeof current === 'object' && typeof current.$ref === 'string'; hops += 1) {
    if (hops > 32 || !current.$ref.startsWith('#/')) throw new Error(`unresolvable $ref ${current.$ref}`);
    current = current.$ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((at, part) => (at && Object.hasOwn(at, part) ? at[part] : undefined), contract);
  }
  return current;
}

/** { method, path, operation } of an operationId, or an error naming it. */
export async function findOperation(operationId) {
  const contract = await loadContract();
  for (const [path, item] of Object.entries(contract.paths ?? {})) {
    for (const method of ['get', 'put', 'post', 'patch', 'delete']) {
      if (item[method]?.operationId === operationId) return { method: method.toUpperCase(), path, operation: item[method], item };
    }
  }
  throw new Error(`the contract has no operation ${operationId}`);
}

/** Whether the contract documents an operation (so a page can leave out what is not there). */
export async function hasOperation(operationId) {
  try {
    await findOperation(operationId);
    return true;
  } catch {
    return false;
  }
}

/** The JSON schema of an operation's request body, `$ref`s at the top resolved. */
export async function requestSchema(operationId) {
  const contract = await loadContract();
  const { operation } = await findOperation(operationId);
  const body = deref(contract, operation.requestBody);
  return deref(contract, body?.content?.['application/json']?.schema);
}

/**
 * The Authorization value for an operation: the first of its security requirements the signed-in
 * party can meet (an operator's admin token is a bearer token; a partner's credentials are
 * `Basic base64(id:secret)`). Nothing for an operation without security.
 */
async function authorization(operation, contract, session) {
  const requirements = operation.security ?? contract.security ?? [];
  for (const requirement of requirements) {
    for (const name of Object.keys(requirement)) {
      const scheme = deref(contract, contract.components?.securitySchemes?.[name]);
      if (scheme?.type !== 'http') continue;
      const kind = String(scheme.scheme).toLowerCase();
      if (kind === 'bearer' && session.token) return `Bearer ${session.token}`;
      if (kind === 'basic' && session.id && session.secret) return `Basic ${base64(`${session.id}:${session.secret}`)}`;
    }
  }
  return undefined;
}

function base64(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * Calls an operation. `params` fills path and query parameters by their contract names; `body`
 * is sent as JSON. Answers `{ ok, status, body }`: `body` is the parsed JSON answer, for an
 * error the contract's `{ error_code, error_message }`.
 */
export async function call(session, operationId, { params = {}, body } = {}) {
  const response = await send(session, operationId, { params, body, accept: 'application/json' });
  const text = await response.text();
  let parsed;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = { error_code: 'UNKNOWN_ERROR', error_message: `the platform answered HTTP ${response.status} with a body that is not JSON` };
  }
  return { ok: response.ok, status: response.status, body: parsed };
}

/**
 * Downloads what an operation answers as a file (a statement's CSV): `{ ok: true, blob, filename }`,
 * the file name from its Content-Disposition; an error answers like `call`.
 */
export async function download(session, operationId, { params = {} } = {}) {
  const response = await send(session, operationId, { params, accept: '*/*' });
  if (!response.ok) {
    const text = await response.text();
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { error_code: 'UNKNOWN_ERROR', error_message: `the platform answered HTTP ${response.status}` };
    }
    return { ok: false, status: response.status, body: parsed };
  }
  const disposition = response.headers.get('Content-Disposition') ?? '';
  const filename = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'download';
  return { ok: true, status: response.status, blob: await response.blob(), filename };
}

async function send(session, operationId, { params, body, accept }) {
  const contract = await loadContract();
  const { method, path, operation, item } = await findOperation(operationId);
  const declared = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((parameter) => deref(contract, parameter));
  let url = path;
  const query = new URLSearchParams();
  for (const parameter of declared) {
    const value = params[parameter.name];
    if (value === undefined || value === null || value === '') continue;
    if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
    else if (parameter.in === 'query') query.set(parameter.name, String(value));
  }
  if (/\{[^}]+\}/.test(url)) throw new Error(`${operationId}: missing path parameter in ${url}`);
  const headers = { Accept: accept };
  const auth = await authorization(operation, contract, session);
  if (auth) headers.Authorization = auth;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const target = new URL(`..${url}${query.toString() ? `?${query}` : ''}`, location.href);
  return fetch(target, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
  });
}
