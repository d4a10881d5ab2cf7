import type { ClientOptions, HeadersOptions } from 'openapi-fetch';
import { stringifyLossless } from '../contract/json.js';

/** What every contract client needs: where the API is, and optionally headers and a fetch. */
export interface ContractClientOptions {
  /** The API's address, e.g. the platform's `{base_url}` or a partner's registered server. */
  baseUrl: string;
  /** Headers sent with every request, typically `Authorization`. */
  headers?: HeadersOptions;
  /** A fetch to use instead of `globalThis.fetch` (tests, proxies, custom time-outs). */
  fetch?: (input: Request) => Promise<Response>;
}

/**
 * openapi-fetch options that never turn money into a float: request bodies are written with
 * lossless-json, so LosslessNumbers (from `parseLossless`) keep every digit they were read with,
 * and strings stay strings.
 */
export function losslessClientOptions(options: ContractClientOptions): ClientOptions {
  return {
    baseUrl: options.baseUrl,
    ...(options.headers !== undefined && { headers: options.headers }),
    ...(options.fetch !== undefined && { fetch: options.fetch }),
    bodySerializer: (body: unknown) => stringifyLossless(body),
  };
}
