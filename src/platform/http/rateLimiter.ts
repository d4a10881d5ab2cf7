import { loadDocument } from '../../contract/documents.js';

/** One token-bucket budget: `perSecond` sustained, bursts of `burst`. */
export interface RateLimitBudget {
  perSecond: number;
  burst: number;
}

/** The budgets the contract states once, as `x-rate-limits` on its 429 response (ADR 0017). */
export interface ContractRateLimits {
  /** Per authenticated partner (or the admin token), per platform instance. */
  partner: RateLimitBudget;
  /** Failed authentications per source address, per platform instance. */
  failedAuthentication: RateLimitBudget;
}

export function contractRateLimits(): ContractRateLimits {
  const limits = loadDocument('platform').components.responses?.RateLimited?.['x-rate-limits'] as Partial<ContractRateLimits> | undefined;
  for (const name of ['partner', 'failedAuthentication'] as const) {
    const budget = limits?.[name];
    if (!budget || !(budget.perSecond > 0) || !(budget.burst >= 1))
      throw new Error(`the contract lost x-rate-limits.${name} on the RateLimited response`);
  }
  return limits as ContractRateLimits;
}

/** The outcome of counting one request: allowed or not, and the IETF RateLimit fields to send. */
export interface RateLimitDecision {
  allowed: boolean;
  /** Whole seconds to wait when refused (Retry-After); 0 when allowed. */
  retryAfterSeconds: number;
  /** `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers), plus `Retry-After` when refused. */
  headers: Record<string, string>;
}

/**
 * Token buckets by key: `perSecond` sustained with bursts of `burst`, per platform instance.
 * Buckets idle long enough to be full again are dropped, so memory follows the active keys.
 * `policy` names the budget in the RateLimit header fields.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private lastSweep = 0;
  private readonly policyField: string;

  constructor(
    readonly policy: string,
    readonly budget: RateLimitBudget,
    private readonly now: () => number = () => performance.now(),
  ) {
    // The bucket holds `burst` requests and refills completely in burst / perSecond seconds.
    this.policyField = `"${policy}";q=${budget.burst};w=${Math.max(1, Math.ceil(budget.burst / budget.perSecond))}`;
  }

  get ratePerSecond(): number {
    return this.budget.perSecond;
  }

  /** Takes a token for `key`. */
  take(key: string): RateLimitDecision {
    const { perSecond, burst } = this.budget;
    const now = this.now();
    this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    const retryAfterSeconds = allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
    const headers: Record<string, string> = {
      'RateLimit-Policy': this.policyField,
      RateLimit: `"${this.policy}";r=${Math.floor(bucket.tokens)};t=${Math.ceil((burst - bucket.tokens) / perSecond)}`,
    };
    if (!allowed) headers['Retry-After'] = String(retryAfterSeconds);
    return { allowed, retryAfterSeconds, headers };
  }

  private sweep(now: number): void {
    const refillMs = (this.budget.burst / this.budget.perSecond) * 1000;
    if (now - this.lastSweep < refillMs) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) if (now - bucket.at > refillMs) this.buckets.delete(key);
  }
}

/** The platform's two budgets (ADR 0017): authenticated partners, and failed authentications by source. */
export interface RateLimiters {
  partner: RateLimiter;
  failedAuthentication: RateLimiter;
}

export function createRateLimiters(limits: ContractRateLimits, now?: () => number): RateLimiters {
  return {
    partner: new RateLimiter('partner', limits.partner, now),
    failedAuthentication: new RateLimiter('failed-auth', limits.failedAuthentication, now),
  };
}
