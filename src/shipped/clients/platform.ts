import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../../../generated/types/platform.js';
import { losslessClientOptions, type ContractClientOptions } from './client-options.js';

export type PlatformClient = Client<paths>;

/**
 * A typed client for the Minibridge platform API (what Minibridge serves: E1, E2, E5, the event bridge, admin and probes),
 * typed by the contract (`import type { PlatformApi } from '@minibridge/client'`, also in `@minibridge/contract`).
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
export function createPlatformClient(options: ContractClientOptions): PlatformClient {
  return createClient<paths>(losslessClientOptions(options));
}
