import { loadDocument } from '../../contract/documents.js';

/** One token-bucket budget: `perSecond` sustained, bursts of `burst`. */
export interface RateLimitBudget {
  perSecond: number;
  burst: number;
}

/** The budgets the contract states once, as `x-rate-limits` on its 429 response (ADR 0017). */
export interface ContractRateLimits {
  /** Per authenticated partner (or the admin token), shared by the instances (ADR 0029). */
  partner: RateLimitBudget;
  /** Failed authentications per source address, shared by the instances (ADR 0029). */
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

/** A budget counted somewhere: in this process (RateLimiter) or shared by every instance (SharedRateLimiter). */
export interface Limiter {
  readonly policy: string;
  readonly budget: RateLimitBudget;
  take(key: string): RateLimitDecision | Promise<RateLimitDecision>;
}

/** `RateLimit-Policy`: the bucket holds `burst` requests and refills completely in burst / perSecond seconds. */
function policyField(policy: string, budget: RateLimitBudget): string {
  return `"${policy}";q=${budget.burst};w=${Math.max(1, Math.ceil(budget.burst / budget.perSecond))}`;
}

/** The decision and its RateLimit fields, from the tokens left once the request took one (or could not). */
function decide(policy: string, field: string, budget: RateLimitBudget, allowed: boolean, tokens: number): RateLimitDecision {
  const { perSecond, burst } = budget;
  const retryAfterSeconds = allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond));
  const headers: Record<string, string> = {
    'RateLimit-Policy': field,
    RateLimit: `"${policy}";r=${Math.floor(tokens)};t=${Math.ceil((burst - tokens) / perSecond)}`,
  };
  if (!allowed) headers['Retry-After'] = String(retryAfterSeconds);
  return { allowed, retryAfterSeconds, headers };
}

/**
 * Token buckets by key in this process: `perSecond` sustained with bursts of `burst`.
 * Buckets idle long enough to be full again are dropped, so memory follows the active keys.
 * `policy` names the budget in the RateLimit header fields.
 */
export class RateLimiter implements Limiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private lastSweep = 0;
  private readonly policyField: string;

  constructor(
    readonly policy: string,
    readonly budget: RateLimitBudget,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.policyField = policyField(policy, budget);
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
    return decide(this.policy, this.policyField, this.budget, allowed, bucket.tokens);
  }

  private sweep(now: number): void {
    const refillMs = (this.budget.burst / this.budget.perSecond) * 1000;
    if (now - this.lastSweep < refillMs) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) if (now - bucket.at > refillMs) this.buckets.delete(key);
  }
}

/** Token buckets every platform instance shares: Redis or PostgreSQL (ADR 0029). */
export interface SharedBuckets {
  /** `redis` or `postgres`: the label of the fallback metric and log. */
  readonly name: string;
  /** Refills `key`'s bucket and takes a token if it holds one: one atomic round trip. */
  take(key: string, perSecond: number, burst: number): Promise<{ allowed: boolean; tokens: number }>;
}

/**
 * A budget every instance shares (ADR 0029). When the shared store fails (unreachable, too
 * slow), the request is counted by this instance's own bucket instead and `onFallback` is told:
 * the limit degrades to the per-instance budgets of ADR 0017 rather than failing open (no limit)
 * or closed (refusing partners' payments because a counter is away).
 */
export class SharedRateLimiter implements Limiter {
  private readonly policyField: string;

  constructor(
    readonly policy: string,
    readonly budget: RateLimitBudget,
    private readonly shared: SharedBuckets,
    private readonly fallback: RateLimiter,
    private readonly onFallback: (error: unknown) => void,
  ) {
    this.policyField = policyField(policy, budget);
  }

  async take(key: string): Promise<RateLimitDecision> {
    let taken: { allowed: boolean; tokens: number };
    try {
      taken = await this.shared.take(`${this.policy}:${key}`, this.budget.perSecond, this.budget.burst);
    } catch (error) {
      this.onFallback(error);
      return this.fallback.take(key);
    }
    return decide(this.policy, this.policyField, this.budget, taken.allowed, taken.tokens);
  }
}

/** The platform's two budgets (ADR 0017): authenticated partners, and failed authentications by source. */
export interface RateLimiters {
  partner: Limiter;
  failedAuthentication: Limiter;
}

export interface SharedLimits {
  buckets: SharedBuckets;
  /** Called each time a request was counted in this instance because the shared store failed. */
  onFallback(error: unknown): void;
}

/** Per-instance budgets, or shared ones (each with a per-instance fallback) when `shared` is given. */
export function createRateLimiters(limits: ContractRateLimits, now?: () => number, shared?: SharedLimits): RateLimiters {
  const local = (policy: string, budget: RateLimitBudget) => new RateLimiter(policy, budget, now);
  const limiter = (policy: string, budget: RateLimitBudget): Limiter =>
    shared ? new SharedRateLimiter(policy, budget, shared.buckets, local(policy, budget), shared.onFallback) : local(policy, budget);
  return {
    partner: limiter('partner', limits.partner),
    failedAuthentication: limiter('failed-auth', limits.failedAuthentication),
  };
}
