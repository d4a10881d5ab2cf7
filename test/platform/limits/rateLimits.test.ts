/**
 * Rate limits (ADR 0017): the budgets live once in the contract (x-rate-limits on the 429
 * response) and the prose says the same; every operation that counts requests documents 429
 * and the RateLimit fields; the limiter reports them as draft-ietf-httpapi-ratelimit-headers
 * says; over HTTP, failed authentications spend their source's budget, not the partner's.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadDocument, resolve, type JsonObject } from '../../../src/contract/documents.js';
import { contractOperations, operation } from '../../../src/contract/operations.js';
import { deliveryLimits } from '../../../src/platform/delivery/deliveryLimits.js';
import { contractRateLimits, RateLimiter, SharedRateLimiter, type SharedBuckets } from '../../../src/platform/limits/rateLimiter.js';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import { ADMIN_TOKEN, HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';

const limits = contractRateLimits();
const platform = loadDocument('platform');
const rateLimited = platform.components.responses.RateLimited!;

describe('the contract states each limit once and its prose agrees', () => {
  test('the 429 response and the API description name the x-rate-limits figures', () => {
    const prose = [String(rateLimited.description), String((platform.info as JsonObject).description)];
    for (const text of prose) {
      const flat = text.replace(/\s+/g, ' ');
      expect(flat).toContain(`${limits.partner.perSecond} requests`);
      expect(flat).toContain(`bursts of ${limits.partner.burst}`);
      expect(flat).toMatch(new RegExp(`${limits.failedAuthentication.perSecond}( per second|/s)`));
      expect(flat).toContain(`bursts of ${limits.failedAuthentication.burst}`);
    }
  });

  test('E6 states its in-flight bound where partners read it', () => {
    const { maxInFlightPerMiniapp } = deliveryLimits();
    const e6 = (loadDocument('miniapp').paths['/complete-order'] as JsonObject).post as JsonObject;
    expect(String(e6.description).replace(/\s+/g, ' ')).toContain(`at most ${maxInFlightPerMiniapp} E6 requests`);
    expect(operation('receiveOrderCompletion').extensions['x-max-in-flight']).toBe(maxInFlightPerMiniapp);
  });

  test('every operation that counts requests documents 429 and the RateLimit fields on its answers', () => {
    const counted = [...contractOperations().values()].filter(
      (op) =>
        op.api === 'platform' &&
        op.security.some((scheme) => ['platformBasic', 'requestSignature', 'hostappToken', 'adminToken'].some((name) => name in scheme)),
    );
    expect(counted.map((op) => op.operationId).sort()).toEqual(
      [
        'completeOrder',
        'createOrderPayment',
        'getDelivery',
        'getPaymentStatus',
        'listDeliveries',
        'redeliverDelivery',
        'sendHostappEvent',
        'sendMiniappEvent',
      ].sort(),
    );
    for (const op of counted) {
      const responses = (platform.paths[op.path]![op.method.toLowerCase()] as JsonObject).responses as JsonObject;
      expect(resolve(platform, responses['429']), `${op.operationId} 429`).toBe(rateLimited);
      for (const [status, ref] of Object.entries(responses)) {
        if (['405', '413', '415', '503'].includes(status)) continue; // refused before authentication, or not counted
        const headers = (resolve(platform, ref).headers ?? {}) as JsonObject;
        expect(Object.keys(headers), `${op.operationId} ${status}`).toEqual(expect.arrayContaining(['RateLimit', 'RateLimit-Policy']));
      }
    }
  });
});

describe('RateLimiter', () => {
  test('reports quota, window, remaining and reset, and Retry-After once refused', () => {
    let now = 0;
    const limiter = new RateLimiter('partner', { perSecond: 2, burst: 4 }, () => now);
    const first = limiter.take('k');
    expect(first).toEqual({
      allowed: true,
      retryAfterSeconds: 0,
      headers: { 'RateLimit-Policy': '"partner";q=4;w=2', RateLimit: '"partner";r=3;t=1' },
    });
    for (let i = 0; i < 3; i++) expect(limiter.take('k').allowed).toBe(true);
    const refused = limiter.take('k');
    expect(refused.allowed).toBe(false);
    expect(refused.headers).toEqual({ 'RateLimit-Policy': '"partner";q=4;w=2', RateLimit: '"partner";r=0;t=2', 'Retry-After': '1' });
    expect(limiter.take('other').allowed).toBe(true);
    now += 500;
    expect(limiter.take('k').allowed).toBe(true);
  });
});

describe('SharedRateLimiter (ADR 0029, 0031)', () => {
  const budget = { perSecond: 2, burst: 4 };

  /** A shared bucket that never refills, answering each take when the test says so. */
  function heldBuckets() {
    const tokens = new Map<string, number>();
    const counts: number[] = [];
    const pending: Array<() => void> = [];
    const buckets: SharedBuckets = {
      name: 'held',
      take(key, _perSecond, _burst, count, ahead) {
        counts.push(count);
        expect(ahead).toBe(0);
        return new Promise((resolve) => {
          pending.push(() => {
            const held = tokens.get(key) ?? budget.burst;
            const granted = Math.min(count, Math.floor(held));
            tokens.set(key, held - granted);
            resolve({ granted, reserved: 0, tokens: held - granted });
          });
        });
      },
    };
    return { buckets, counts, answerAll: () => pending.splice(0).forEach((answer) => answer()) };
  }

  test('requests of one key arriving while its take is in flight are counted by one take, with the outcome of taking them one by one', async () => {
    const held = heldBuckets();
    const fallback = new RateLimiter('partner', budget, () => 0);
    const limiter = new SharedRateLimiter('partner', budget, held.buckets, fallback, () => {
      throw new Error('no fallback expected');
    });
    const decisions = Array.from({ length: 7 }, () => limiter.take('k'));
    const other = limiter.take('other');
    // One take in flight per key: the first request went alone, the six after it wait together.
    expect(held.counts).toEqual([1, 1]);
    held.answerAll();
    await new Promise((resolve) => setImmediate(resolve));
    expect(held.counts).toEqual([1, 1, 6]);
    held.answerAll();
    const answers = await Promise.all(decisions);
    await other;
    // The same requests through an in-process bucket of the same budget, one by one.
    const oneByOne = new RateLimiter('partner', budget, () => 0);
    const expected = Array.from({ length: 7 }, () => oneByOne.take('k'));
    expect(answers).toEqual(expected);
    expect(answers.filter((answer) => answer.allowed)).toHaveLength(budget.burst);
  });

  test('when the shared store fails, the whole group is counted in this instance and the fallback is told', async () => {
    let failures = 0;
    const failing: SharedBuckets = { name: 'down', take: () => Promise.reject(new Error('connection refused')) };
    const limiter = new SharedRateLimiter('partner', budget, failing, new RateLimiter('partner', budget, () => 0), () => failures++);
    const answers = await Promise.all(Array.from({ length: 6 }, () => limiter.take('k')));
    expect(answers.map((answer) => answer.allowed)).toEqual([true, true, true, true, false, false]);
    expect(failures).toBe(2);
  });
});

describe('SharedRateLimiter taking ahead (ADR 0048)', () => {
  // The contract's partner budget and take-ahead: 50 per second, bursts of 100, a tenth of a second ahead.
  const budget = limits.partner;
  const aheadTokens = Math.floor(budget.perSecond * limits.takeAheadSeconds);

  /** One shared bucket that never refills, as the statement and the script take from it; `takes` counts round trips. */
  function sharedBucket(start = budget.burst) {
    let held = start;
    const calls = { takes: 0 };
    const buckets: SharedBuckets = {
      name: 'bucket',
      take(_key, _perSecond, burst, count, ahead) {
        calls.takes++;
        const granted = Math.min(count, Math.floor(held));
        const reserved = Math.min(ahead, Math.max(0, Math.floor(held - granted - burst / 2)));
        held -= granted + reserved;
        return Promise.resolve({ granted, reserved, tokens: held });
      },
    };
    return { buckets, calls, held: () => held };
  }
  const limiterOn = (buckets: SharedBuckets, now: () => number = () => 0) =>
    new SharedRateLimiter(
      'partner',
      budget,
      buckets,
      new RateLimiter('partner', budget, now),
      () => {
        throw new Error('no fallback expected');
      },
      limits.takeAheadSeconds,
      now,
    );

  test('the contract takes a whole number of tokens ahead at the partner budget', () => {
    expect(aheadTokens).toBeGreaterThanOrEqual(1);
  });

  test('one round trip counts a request and the next ones, each decided as if taken one by one', async () => {
    const bucket = sharedBucket();
    const limiter = limiterOn(bucket.buckets);
    const oneByOne = new RateLimiter('partner', budget, () => 0);
    for (let i = 0; i < 3 * (aheadTokens + 1); i++) expect(await limiter.take('k')).toEqual(oneByOne.take('k'));
    expect(bucket.calls.takes).toBe(3);
  });

  test('within half a burst of the limit nothing is taken ahead: every request is a round trip, and exactly the budget is allowed', async () => {
    const bucket = sharedBucket(budget.burst / 2);
    const limiter = limiterOn(bucket.buckets);
    const answers = [];
    for (let i = 0; i < budget.burst / 2 + 3; i++) answers.push(await limiter.take('k'));
    expect(bucket.calls.takes).toBe(answers.length);
    expect(answers.map((answer) => answer.allowed)).toEqual([...Array(budget.burst / 2).fill(true), false, false, false]);
  });

  test('tokens taken ahead stay usable until the bucket would have refilled, then the next request takes again', async () => {
    let now = 0;
    const bucket = sharedBucket();
    const limiter = limiterOn(bucket.buckets, () => now);
    await limiter.take('k');
    expect(bucket.held()).toBe(budget.burst - 1 - aheadTokens);
    now += limits.takeAheadSeconds * 1000 * 5;
    await limiter.take('k');
    expect(bucket.calls.takes).toBe(1);
    now += (budget.burst / budget.perSecond) * 1000;
    const late = await limiter.take('k');
    expect(bucket.calls.takes).toBe(2);
    // The dropped reserve stayed spent in the (never refilling) shared bucket.
    expect(bucket.held()).toBe(budget.burst - 2 - 2 * aheadTokens);
    expect(late.headers.RateLimit).toBe(
      `"partner";r=${budget.burst - 2 - aheadTokens};t=${Math.ceil((2 + aheadTokens) / budget.perSecond)}`,
    );
  });

  test('a partner sending sparsely within its budget over two instances still gets its whole burst afterwards', async () => {
    // A refilling bucket on a hand-driven clock, as the statement and the script keep it.
    let now = 0;
    let held = budget.burst;
    let at = 0;
    const refilling: SharedBuckets = {
      name: 'refilling',
      take(_key, perSecond, burst, count, ahead) {
        held = Math.min(burst, held + ((now - at) / 1000) * perSecond);
        at = now;
        const granted = Math.min(count, Math.floor(held));
        const reserved = Math.min(ahead, Math.max(0, Math.floor(held - granted - burst / 2)));
        held -= granted + reserved;
        return Promise.resolve({ granted, reserved, tokens: held });
      },
    };
    const [a, b] = [limiterOn(refilling, () => now), limiterOn(refilling, () => now)];
    // One request every 110 ms on each instance for 3 s: about a third of the sustained rate.
    for (let step = 0; step < 28; step++) {
      expect((await a.take('k')).allowed).toBe(true);
      expect((await b.take('k')).allowed).toBe(true);
      now += 110;
    }
    // Then a burst at once: what the partner did not spend is still there.
    const burst = [];
    for (let i = 0; i < budget.burst - 10; i++) burst.push(await (i % 2 ? b : a).take('k'));
    expect(burst.filter((answer) => !answer.allowed)).toHaveLength(0);
  });

  test('two instances on one bucket, each taking ahead: together they allow exactly the burst, never more', async () => {
    const bucket = sharedBucket();
    const [a, b] = [limiterOn(bucket.buckets), limiterOn(bucket.buckets)];
    const answers = [];
    let takesWhileAllowed = 0;
    for (let i = 0; i < 2 * budget.burst; i++) {
      answers.push(await (i % 2 ? b : a).take('k'));
      if (answers.at(-1)!.allowed) takesWhileAllowed = bucket.calls.takes;
    }
    expect(answers.filter((answer) => answer.allowed)).toHaveLength(budget.burst);
    // Above half the bucket most requests were counted without a round trip.
    expect(takesWhileAllowed).toBeLessThan(budget.burst - budget.burst / 4);
  });

  test('requests waiting for a take are served before later ones, from the reserve that take brought', async () => {
    const bucket = sharedBucket();
    const limiter = limiterOn(bucket.buckets);
    const order: number[] = [];
    const pending = Array.from({ length: aheadTokens + 2 }, (_, i) => Promise.resolve(limiter.take('k')).then(() => order.push(i)));
    await Promise.all(pending);
    expect(order).toEqual(Array.from({ length: aheadTokens + 2 }, (_, i) => i));
    // The first alone; the reserve its take brought serves the next in order; the last takes again.
    expect(bucket.calls.takes).toBe(2);
  });
});

describe('SharedRateLimiter when reporting a failure fails too', () => {
  test('the requests are still counted here and the key is not left waiting', async () => {
    const budget = { perSecond: 2, burst: 4 };
    const failing: SharedBuckets = { name: 'down', take: () => Promise.reject(new Error('connection refused')) };
    const limiter = new SharedRateLimiter('partner', budget, failing, new RateLimiter('partner', budget, () => 0), () => {
      throw new Error('the log is broken too');
    });
    const first = await Promise.all(Array.from({ length: 3 }, () => limiter.take('k')));
    expect(first.map((answer) => answer.allowed)).toEqual([true, true, true]);
    // The key still answers: nothing was left in flight.
    expect((await limiter.take('k')).allowed).toBe(true);
    expect((await limiter.take('k')).allowed).toBe(false);
  });
});

describe('over HTTP, with a failed-authentication budget of 3', () => {
  const harness = new PlatformHarness();
  beforeAll(async () => {
    await harness.start({ config: { rateLimit: { perSecond: 1, burst: 3 }, failedAuthLimit: { perSecond: 0.001, burst: 3 } } });
  }, 60_000);
  afterAll(() => harness.stop());

  const statusBody = () => ({ app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: 'hop_unknown' });

  test('wrong credentials naming the partner: 400 UNAUTHORIZED three times, then 429; the partner itself is still served', async () => {
    const wrong = basicAuthorization(MINIAPP.id, 'not-the-secret');
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await harness.call('getPaymentStatus', statusBody(), { authorization: wrong }));
    expect(answers.map((answer) => [answer.status, answer.body.error_code])).toEqual([
      [400, 'UNAUTHORIZED'],
      [400, 'UNAUTHORIZED'],
      [400, 'UNAUTHORIZED'],
      [429, 'RATE_LIMITED'],
      [429, 'RATE_LIMITED'],
    ]);
    expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"failed-auth";q=3;w=3000');
    expect(Number(answers[4]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const genuine = await harness.call('getPaymentStatus', statusBody(), { authorization: harness.miniappAuth() });
    expect(genuine.status).toBe(400);
    expect(genuine.body.error_code).not.toMatch(/UNAUTHORIZED|RATE_LIMITED/);
    expect(genuine.headers.get('ratelimit-policy')).toBe('"partner";q=3;w=3');
    expect(genuine.headers.get('ratelimit')).toBe('"partner";r=2;t=1');
  });

  test('the admin API counts too, and documents its 429', async () => {
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await harness.call('listDeliveries', undefined, { authorization: `Bearer ${ADMIN_TOKEN}` }));
    expect(answers.map((answer) => answer.status)).toContain(429);
    expect(answers.find((answer) => answer.status === 429)!.body.error_code).toBe('RATE_LIMITED');
  });
});
