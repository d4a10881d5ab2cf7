import type { ClientOptions, HeadersOptions } from 'openapi-fetch';
import { basicAuthorization, prefixedAuthorization } from '../../wire/authorization.js';
import { losslessBody } from './losslessBody.js';

/**
 * The credentials a client sends in `Authorization`, one variant per kind of security scheme in
 * the contract (see each operation's `security` in the reference):
 *
 * - `basic`: `Basic base64(id:secret)`: `platformBasic` (a miniapp's `app_id` and `secret_key`
 *   on E1, E2 and the miniapp event operation; a host app's `client_id` and `secret_key` on E5)
 *   and `miniappBasic` (the platform calling a miniapp server);
 * - `token`: `<prefix> base64(id:secret)`: `hostappToken` (the host app's token prefix, `Token`
 *   unless the host app chose another; E8 and the platform calling a host app server);
 * - `userAccessToken`: `<prefix> <user access token>`: `userAccessToken`;
 * - `bearer`: `Bearer <token>`: `adminToken` (the admin operations).
 */
export type ClientCredentials =
  | { scheme: 'basic'; id: string; secret: string }
  | { scheme: 'token'; id: string; secret: string; prefix?: string | undefined }
  | { scheme: 'userAccessToken'; token: string; prefix?: string | undefined }
  | { scheme: 'bearer'; token: string };

/** What every contract client needs: where the API is, and optionally credentials, headers and a fetch. */
export interface ContractClientOptions {
  /** The API's address, e.g. the platform's `{base_url}` or a partner's registered server. */
  baseUrl: string;
  /** Sent as `Authorization` on every request (an `Authorization` in `headers` wins). */
  credentials?: ClientCredentials | undefined;
  /** Headers sent with every request. */
  headers?: HeadersOptions | undefined;
  /** A fetch to use instead of `globalThis.fetch` (tests, proxies, custom time-outs). */
  fetch?: ((input: Request) => Promise<Response>) | undefined;
}

/** The default `<prefix>` of `hostappToken` and `userAccessToken`. */
const DEFAULT_TOKEN_PREFIX = 'Token';

/** The `Authorization` header value for the credentials. */
export function authorizationHeader(credentials: ClientCredentials): string {
  switch (credentials.scheme) {
    case 'basic':
      return basicAuthorization(credentials.id, credentials.secret);
    case 'token':
      return prefixedAuthorization(credentials.prefix ?? DEFAULT_TOKEN_PREFIX, credentials.id, credentials.secret);
    case 'userAccessToken':
      return `${credentials.prefix ?? DEFAULT_TOKEN_PREFIX} ${credentials.token}`;
    case 'bearer':
      return `Bearer ${credentials.token}`;
  }
}

/**
 * openapi-fetch options that never turn money into a float: request bodies are written with
 * losslessBody, so LosslessNumbers (from `parseLossless`) keep every digit they were read with,
 * and strings stay strings.
 */
export function losslessClientOptions(options: ContractClientOptions): ClientOptions {
  const headers = withCredentials(options.headers, options.credentials);
  return {
    baseUrl: options.baseUrl,
    ...(headers !== undefined && { headers }),
    ...(options.fetch !== undefined && { fetch: options.fetch }),
    bodySerializer: (body: unknown) => losslessBody(body),
  };
}

function withCredentials(headers: HeadersOptions | undefined, credentials: ClientCredentials | undefined): HeadersOptions | undefined {
  if (credentials === undefined) return headers;
  const merged: Record<string, string> = { authorization: authorizationHeader(credentials) };
  for (const [name, value] of headerEntries(headers)) merged[name.toLowerCase()] = value;
  return merged;
}

function headerEntries(headers: HeadersOptions | undefined): Array<[string, string]> {
  if (headers === undefined) return [];
  if (headers instanceof Headers || Array.isArray(headers)) return [...new Headers(headers).entries()];
  return Object.entries(headers).flatMap(([name, value]): Array<[string, string]> =>
    value === null || value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : String(value)]],
  );
}
