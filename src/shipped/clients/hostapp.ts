import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../../../generated/types/hostapp.js';
import { losslessClientOptions, type ContractClientOptions } from './client-options.js';

export type HostappClient = Client<paths>;

/**
 * A typed client for a host app server's API (what Minibridge calls: E3, E4, E7),
 * typed by the contract (`import type { HostappApi } from '@minibridge/client'`, also in `@minibridge/contract`).
 *
 * Request bodies keep the exact digits of numbers read with lossless-json (`LosslessNumber`) and of
 * bigints. Responses are parsed with `JSON.parse` by default, which turns long
 * numbers into floats: when a response carries money you need exactly, ask for the text and
 * parse it without loss:
 *
 * ```ts
 * import { parse } from 'lossless-json'; // or parseLossless from @minibridge/partner-kit
 * const { data: text } = await client.POST(path, { body, parseAs: 'text' });
 * const payload = text === undefined ? undefined : parse(text);
 * ```
 */
export function createHostappClient(options: ContractClientOptions): HostappClient {
  return createClient<paths>(losslessClientOptions(options));
}
