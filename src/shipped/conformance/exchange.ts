import { createHash } from 'node:crypto';
import { signRequest } from '../../wire/signing.js';
import { parseLossless } from '../../contract/json.js';

export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The exact bytes sent (JSON text), when there is a body. */
  body?: string;
}

export interface Exchange {
  request: SentRequest;
  /** 0 when no HTTP answer came (refused, timed out). */
  status: number;
  contentType?: string;
  text: string;
  /** The answer parsed without loss, or undefined when it is not JSON. */
  json?: unknown;
  error?: string;
}

export interface SendOptions {
  timeoutMs: number;
  /** Signing secrets: when given, every request is signed as Minibridge signs (ADR 0004). */
  signingSecrets?: readonly string[];
  /** How many times to wait out a 429 (Retry-After) before recording it. */
  rateLimitRetries?: number;
}

/**
 * Signs without repeating a signature: receivers refuse a signature they have seen within the
 * replay window, and the kit legitimately sends identical bytes twice (duplicate deliveries,
 * auth probes), as Minibridge would seconds apart. The timestamp moves on by a second instead.
 */
export class Signer {
  private readonly used = new Set<string>();
  constructor(private readonly secrets: readonly string[]) {}

  /**
   * Both schemes, as Minibridge signs until the deprecated one's sunset. `messageId` is the
   * `webhook-id` (the event id for E6 and E7, the same on a duplicate delivery).
   */
  sign(signedText: string, options: { secrets?: readonly string[]; messageId?: string; secondsAgo?: number } = {}): Record<string, string> {
    const secrets = options.secrets ?? this.secrets;
    let now = Math.floor(Date.now() / 1000) - (options.secondsAgo ?? 0);
    const key = (at: number) => createHash('sha256').update(`${at}.${signedText}.${secrets.join()}`).digest('hex');
    while (this.used.has(key(now))) now += 1;
    this.used.add(key(now));
    return { ...signRequest(signedText, secrets, { nowSeconds: now, messageId: options.messageId }) };
  }
}

export async function send(request: SentRequest, options: SendOptions): Promise<Exchange> {
  let retries = options.rateLimitRetries ?? 3;
  for (;;) {
    const { exchange, retryAfter } = await sendOnce(request, options.timeoutMs);
    if (exchange.status !== 429 || retries-- <= 0) return exchange;
    const seconds = /^\d{1,3}$/.test(retryAfter ?? '') ? Number(retryAfter) : 1;
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, seconds) * 1000));
  }
}

async function sendOnce(request: SentRequest, timeoutMs: number): Promise<{ exchange: Exchange; retryAfter?: string }> {
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    const text = await response.text();
    return {
      exchange: {
        request,
        status: response.status,
        contentType: response.headers.get('content-type') ?? undefined,
        text,
        json: parseJson(text),
      },
      retryAfter: response.headers.get('retry-after') ?? undefined,
    };
  } catch (error) {
    const reason =
      error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `request failed: ${describe(error)}`;
    return { exchange: { request, status: 0, text: '', error: reason } };
  }
}

function parseJson(text: string): unknown {
  try {
    return parseLossless(text);
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
