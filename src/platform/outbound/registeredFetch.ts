import { signRequest } from '../../wire/signing.js';
import { httpFetch } from './httpFetch.js';
import { answerLimits, type PartnerOperationId } from './partnerCall.js';

/**
 * One generated client per partner, operation and registered URL, built on first use: the client
 * and its fetch (with the operation's answer cap) are the same for every call, only the request
 * differs.
 */
export function clientFor<Partner extends object, Client>(
  cache: WeakMap<Partner, Map<string, Client>>,
  partner: Partner,
  operationId: PartnerOperationId,
  url: string,
  make: () => Client,
): Client {
  let byOperation = cache.get(partner);
  if (!byOperation) cache.set(partner, (byOperation = new Map()));
  const key = `${operationId} ${url}`;
  let client = byOperation.get(key);
  if (!client) byOperation.set(key, (client = make()));
  return client;
}

/**
 * A fetch for the generated clients that sends each request to the URL the partner registered
 * for that operation (the contract's partner paths are only suggested defaults), keeping the
 * query string, signs the exact bytes sent when the partner enabled signing, and reads the
 * answer against the operation's cap (`x-max-answer-bytes`).
 */
export function registeredFetch(
  registeredUrl: string,
  signingSecrets: readonly string[],
  operationId: PartnerOperationId,
): (request: Request) => Promise<Response> {
  const { maxAnswerBytes } = answerLimits(operationId);
  return async (request) => {
    const target = new URL(registeredUrl);
    const query = new URL(request.url).searchParams;
    query.forEach((value, name) => target.searchParams.append(name, value));
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    const body = hasBody ? await request.text() : undefined;
    const headers = new Headers(request.headers);
    if (signingSecrets.length > 0) {
      // webhook-id: the event id on E6 and E7, so every retry of one event carries the same id.
      const messageId = headers.get('x-minibridge-event-id') ?? undefined;
      const signed = signRequest(hasBody ? (body ?? '') : target.search.replace(/^\?/, ''), signingSecrets, { messageId });
      for (const [name, value] of Object.entries(signed)) headers.set(name, value);
    }
    return httpFetch(target, { method: request.method, headers, body, signal: request.signal, maxAnswerBytes });
  };
}
