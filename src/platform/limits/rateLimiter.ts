import { loadDocument } from '../../contract/documents.js';
import type { BucketTake } from '../store/index.js';

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
  /** Redeliveries a signed-in partner asks for, per partner (ADR 0038). */
  redelivery: RateLimitBudget;
  /**
   * How much of a shared budget an instance may take ahead of its requests, in seconds of its
   * sustained rate (ADR 0048).
   */
  takeAheadSeconds: number;
}

export function contractRateLimits(): ContractRateLimits {
  const limits = loadDocument('platform').components.responses?.RateLimited?.['x-rate-limits'] as Partial<ContractRateLimits> | undefined;
  for (const name of ['partner', 'failedAuthentication', 'redelivery'] as const) {
    const budget = limits?.[name];
    if (!budget || !(budget.perSecond > 0) || !(budget.burst >= 1))
      throw new Error(`the contract lost x-rate-limits.${name} on the RateLimited response`);
  }
  const ahead = limits?.takeAheadSeconds;
  if (typeof ahead !== 'number' || !(ahead >= 0) || ahead > 1)
    throw new Error('the contract lost x-rate-limits.takeAheadSeconds (0 to 1) on the RateLimited response');
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
  /**
   * Refills `key`'s bucket and takes `count` tokens, or as many whole tokens as it holds: one
   * atomic round trip that counts `count` requests in order (ADR 0031). Then up to `ahead`
   * tokens more, only from the whole tokens above half the burst, as `reserved` (ADR 0048).
   */
  take(key: string, perSecond: number, burst: number, count: number, ahead: number): Promise<BucketTake>;
}

/** Tokens one instance took ahead for a key (ADR 0048): spent in the shared bucket, usable here until `until`. */
interface Reserve {
  tokens: number;
  /** The shared bucket's tokens as the take that made the reserve left them. */
  shared: number;
  until: number;
}

/** Requests of one key waiting for the take in flight to come back. */
interface KeyQueue {
  waiting: Array<(decision: RateLimitDecision) => void>;
  inFlight: boolean;
}

/** Most requests one take counts: a bound on one statement's effect, far above any burst a take meets. */
const maxCountPerTake = 1000;

/**
 * A budget every instance shares (ADR 0029). One take per key is in flight at a time: the
 * requests of that key arriving meanwhile are counted together by the next take, in arrival
 * order (ADR 0031), so under load a round trip counts many requests, and alone a request is
 * counted at once. The outcome is the one the same requests taken one by one would have had.
 *
 * Taken ahead (ADR 0048): while the shared bucket is more than half full, a take also asks for
 * up to `takeAheadSeconds` of the sustained rate, which this instance spends on the key's next
 * requests without a round trip until they run out or the bucket's refill time has passed. The
 * bucket never grants more than it holds, so over time the budget across instances is never
 * exceeded (a short window may see what the instances hold ahead on top of a full bucket);
 * within half a burst of the limit nothing is taken ahead and every request is counted as above.
 *
 * When the shared store fails (unreachable, too slow), the requests are counted by this
 * instance's own bucket instead and `onFallback` is told: the limit degrades to the per-instance
 * budgets of ADR 0017 rather than failing open (no limit) or closed (refusing partners' payments
 * because a counter is away).
 */
export class SharedRateLimiter implements Limiter {
  private readonly policyField: string;
  private readonly queues = new Map<string, KeyQueue>();
  private readonly reserves = new Map<string, Reserve>();
  /** Tokens a take asks for ahead: `takeAheadSeconds` of the sustained rate, whole. */
  private readonly ahead: number;
  /**
   * How long tokens taken ahead stay usable: the time the bucket takes to refill completely. A
   * reserve that timed out sooner would throw away tokens a partner within its budget still
   * needs, and a sparse partner's bucket would sink towards half; past the refill time the
   * bucket is full again whatever this instance held, so dropping the reserve then loses nothing.
   */
  private readonly keepMs: number;
  private lastSweep = 0;

  constructor(
    readonly policy: string,
    readonly budget: RateLimitBudget,
    private readonly shared: SharedBuckets,
    private readonly fallback: RateLimiter,
    private readonly onFallback: (error: unknown) => void,
    takeAheadSeconds = 0,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.policyField = policyField(policy, budget);
    // Never more than half the burst: only tokens above half of it are ever taken ahead.
    this.ahead = Math.min(Math.floor(budget.perSecond * takeAheadSeconds), Math.floor(budget.burst / 2));
    this.keepMs = (budget.burst / budget.perSecond) * 1000;
  }

  take(key: string): RateLimitDecision | Promise<RateLimitDecision> {
    let queue = this.queues.get(key);
    // Requests already waiting for a take go first: a reserve never serves a later request before them.
    if (!queue) {
      const reserved = this.fromReserve(key);
      if (reserved) return reserved;
      queue = { waiting: [], inFlight: false };
      this.queues.set(key, queue);
    }
    const decided = new Promise<RateLimitDecision>((resolve) => queue.waiting.push(resolve));
    if (!queue.inFlight) void this.flush(key, queue);
    return decided;
  }

  /** A request counted against the tokens this instance took ahead for `key`, if any are left and still usable. */
  private fromReserve(key: string): RateLimitDecision | undefined {
    const reserve = this.reserves.get(key);
    if (!reserve) return undefined;
    if (this.now() >= reserve.until) {
      this.reserves.delete(key);
      return undefined;
    }
    reserve.tokens -= 1;
    if (reserve.tokens < 1) this.reserves.delete(key);
    return decide(this.policy, this.policyField, this.budget, true, reserve.shared + reserve.tokens);
  }

  /** Counts everything waiting on `key`, from its reserve while it lasts, else with one take per group, until none waits. */
  private async flush(key: string, queue: KeyQueue): Promise<void> {
    queue.inFlight = true;
    try {
      while (queue.waiting.length > 0) {
        const reserved = this.fromReserve(key);
        if (reserved) {
          queue.waiting.shift()!(reserved);
          continue;
        }
        const group = queue.waiting.splice(0, maxCountPerTake);
        let decisions: RateLimitDecision[];
        try {
          decisions = await this.takeGroup(key, group.length);
        } catch {
          // Nothing in takeGroup is expected to throw; if it does, the group is still answered
          // (counted here) rather than left waiting, and the key is never left wedged.
          decisions = group.map(() => this.fallback.take(key));
        }
        group.forEach((resolve, index) => resolve(decisions[index]!));
      }
    } finally {
      queue.inFlight = false;
      this.queues.delete(key);
    }
  }

  private async takeGroup(key: string, count: number): Promise<RateLimitDecision[]> {
    let taken: BucketTake;
    try {
      taken = await this.shared.take(`${this.policy}:${key}`, this.budget.perSecond, this.budget.burst, count, this.ahead);
    } catch (error) {
      try {
        this.onFallback(error);
      } catch {
        // Reporting the fallback must not stop the requests from being counted.
      }
      return Array.from({ length: count }, () => this.fallback.take(key));
    }
    if (taken.reserved >= 1) this.keep(key, { tokens: taken.reserved, shared: taken.tokens, until: this.now() + this.keepMs });
    // As if taken one by one: the i-th allowed request left the tokens its successors took
    // (those taken ahead included), and a refused one found less than one token.
    const left = taken.tokens + taken.reserved;
    return Array.from({ length: count }, (_, index) =>
      index < taken.granted
        ? decide(this.policy, this.policyField, this.budget, true, left + (taken.granted - 1 - index))
        : decide(this.policy, this.policyField, this.budget, false, taken.tokens),
    );
  }

  /** Keeps a reserve; reserves past their time are dropped at most once per refill time, so memory follows the active keys. */
  private keep(key: string, reserve: Reserve): void {
    const now = this.now();
    if (now - this.lastSweep >= this.keepMs) {
      this.lastSweep = now;
      for (const [other, kept] of this.reserves) if (now >= kept.until) this.reserves.delete(other);
    }
    this.reserves.set(key, reserve);
  }
}

/**
 * The platform's budgets: authenticated partners and failed authentications by source (ADR 0017),
 * redeliveries by partner (ADR 0038), and the platform's own status queries per host app
 * (reconciliation, ADR 0039).
 */
export interface RateLimiters {
  partner: Limiter;
  failedAuthentication: Limiter;
  reconciliation: Limiter;
  redelivery: Limiter;
}

export interface SharedLimits {
  buckets: SharedBuckets;
  /** Called each time a request was counted in this instance because the shared store failed. */
  onFallback(error: unknown): void;
}

/** Per-instance budgets, or shared ones (each with a per-instance fallback) when `shared` is given. */
export function createRateLimiters(
  limits: ContractRateLimits & { reconciliation: RateLimitBudget },
  now?: () => number,
  shared?: SharedLimits,
): RateLimiters {
  const local = (policy: string, budget: RateLimitBudget) => new RateLimiter(policy, budget, now);
  const limiter = (policy: string, budget: RateLimitBudget): Limiter =>
    shared
      ? new SharedRateLimiter(policy, budget, shared.buckets, local(policy, budget), shared.onFallback, limits.takeAheadSeconds, now)
      : local(policy, budget);
  return {
    partner: limiter('partner', limits.partner),
    failedAuthentication: limiter('failed-auth', limits.failedAuthentication),
    reconciliation: limiter('reconcile', limits.reconciliation),
    redelivery: limiter('redelivery', limits.redelivery),
  };
}
