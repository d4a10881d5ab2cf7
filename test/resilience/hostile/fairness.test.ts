/**
 * Hostile input, fairness (ADR 0017, ADR 0008), property-based and seeded:
 * - floods of requests that name a real partner (its app_id, its client_id, the admin API) with
 *   wrong credentials, from one or several source addresses (the partner's own among them),
 *   never make that partner's authenticated requests answer 429; every refusal is a contract
 *   error body; a source past its failed-authentication budget is answered 429 with
 *   Retry-After;
 * - among miniapps of which random ones hang, answer slowly or fail, with random backlogs, a
 *   healthy miniapp's first E6 attempt is started by the very next worker tick (the loop ticks
 *   at least every poll interval), and no miniapp ever has more attempts open than the
 *   contract's x-max-in-flight.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { basicAuthorization, prefixedAuthorization } from '../../../src/wire/authorization.js';
import { check, schemaValidator } from '../../../src/contract/operations.js';
import { parseLossless, stringifyLossless } from '../../../src/contract/json.js';
import { deliveryLimits } from '../../../src/platform/delivery/deliveryLimits.js';
import { contractRateLimits } from '../../../src/platform/limits/rateLimiter.js';
import type { ClaimedDelivery } from '../../../src/platform/store/index.js';
import { DeliveryRig, until, type MiniappBehaviour } from '../support/deliveryRig.js';
import { describeOnBackends } from '../../support/databases.js';
import { startHarness, type Harness } from '../support/platformHarness.js';
import { PARTIES } from '../support/registry.js';
import { ADMIN_TOKEN } from '../support/requests.js';

const limits = contractRateLimits();
const { maxInFlightPerMiniapp } = deliveryLimits();
const errorBody = schemaValidator('platform', 'Error');

interface Sent {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

type Target = 'miniapp' | 'hostapp' | 'admin';

async function send(baseUrl: string, target: Target, authorization: string | undefined, source: string | undefined): Promise<Sent> {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  if (source !== undefined) headers['x-forwarded-for'] = source;
  let response: Response;
  if (target === 'admin') {
    response = await fetch(`${baseUrl}/api/v1/admin/deliveries?limit=1`, { headers });
  } else {
    headers['content-type'] = 'application/json';
    const [path, body] =
      target === 'miniapp'
        ? [
            '/api/v1/orders/get-payment-status/',
            { app_id: PARTIES.appId, client_id: PARTIES.clientId, order_payment_id: 'hop_not_a_real_payment' },
          ]
        : [
            '/api/v1/orders/complete-order/',
            { order_payment_id: 'hop_not_a_real_payment', app_id: PARTIES.appId, client_id: PARTIES.clientId, payment_status: 'paid' },
          ];
    response = await fetch(baseUrl + path, { method: 'POST', headers, body: stringifyLossless(body) });
  }
  return { status: response.status, body: parseLossless(await response.text()) as Record<string, unknown>, headers: response.headers };
}

/** The right credentials of each target. */
const rightCredentials: Record<Target, string> = {
  miniapp: basicAuthorization(PARTIES.appId, PARTIES.miniappSecret),
  hostapp: basicAuthorization(PARTIES.clientId, PARTIES.hostappSecret),
  admin: `Bearer ${ADMIN_TOKEN}`,
};

const idOf: Record<Target, string> = { miniapp: PARTIES.appId, hostapp: PARTIES.clientId, admin: 'admin' };

/** Wrong credentials that still name the target: wrong secret, someone else's, other schemes, garbage, none. */
function wrongCredentials(target: Target): fc.Arbitrary<string | undefined> {
  const secret = fc
    .string({ minLength: 1, maxLength: 40 })
    .filter((s) => s !== PARTIES.miniappSecret && s !== PARTIES.hostappSecret && s !== ADMIN_TOKEN && !s.includes(':'));
  return fc.oneof(
    secret.map((s) => basicAuthorization(idOf[target], s)),
    secret.map((s) => `Bearer ${s}`),
    secret.map((s) => prefixedAuthorization('Token', idOf[target], s)),
    fc.constant(basicAuthorization(PARTIES.appId === idOf[target] ? PARTIES.clientId : PARTIES.appId, PARTIES.miniappSecret)),
    fc.constantFrom('Basic', 'Basic !!!', 'Basic ' + Buffer.from('no-colon').toString('base64'), ''),
    fc.constant(undefined),
  );
}

const target = fc.constantFrom<Target>('miniapp', 'hostapp', 'admin');
/** The partner's own address is the connection's (no X-Forwarded-For); the others are attackers'. */
const source = fc.oneof(fc.constant(undefined), fc.ipV4());

/** A flood aimed at one partner (more than its burst, as an attacker would send), with some strays at the others. */
const flood = target.chain((focus) =>
  fc.record({
    sources: fc.uniqueArray(source, { minLength: 1, maxLength: 4 }),
    hostile: fc.array(
      fc
        .tuple(fc.oneof({ weight: 9, arbitrary: fc.constant(focus) }, { weight: 1, arbitrary: target }), fc.nat())
        .chain(([t, pick]) => wrongCredentials(t).map((authorization) => ({ target: t, authorization, pick }))),
      { minLength: limits.partner.burst + 20, maxLength: 2 * limits.partner.burst + 50 },
    ),
    /** Where the real partners' requests go in the flood, and whose they are. */
    genuine: fc.array(fc.tuple(fc.oneof(fc.constant(focus), target), fc.nat()), { minLength: 1, maxLength: 4 }),
  }),
);

describe('failed authentication never spends a partner’s rate limit', () => {
  let harness: Harness;
  beforeAll(async () => {
    // The contract's limits (not the lifted ones of the other resilience tests); X-Forwarded-For names the source.
    harness = await startHarness({
      adminToken: ADMIN_TOKEN,
      trustProxy: true,
      rateLimit: limits.partner,
      failedAuthLimit: limits.failedAuthentication,
    });
  }, 60_000);
  afterAll(() => harness?.close(), 30_000);

  it('floods naming a real partner from one or several sources: the partner is never answered 429', async () => {
    let refusedForBudget = 0;
    await fc.assert(
      fc.asyncProperty(flood, async ({ sources, hostile, genuine }) => {
        const startedAt = performance.now();
        const plan: Array<{ genuine: boolean; target: Target; authorization: string | undefined; source: string | undefined }> =
          hostile.map((h) => ({
            genuine: false,
            target: h.target,
            authorization: h.authorization,
            source: sources[h.pick % sources.length],
          }));
        for (const [t, at] of genuine)
          plan.splice(at % (plan.length + 1), 0, { genuine: true, target: t, authorization: rightCredentials[t], source: undefined });
        const answers: Sent[] = [];
        // Twenty at a time, in the planned order.
        for (let i = 0; i < plan.length; i += 20) {
          answers.push(
            ...(await Promise.all(plan.slice(i, i + 20).map((p) => send(harness.running.url, p.target, p.authorization, p.source)))),
          );
        }
        const failuresBySource = new Map<string, number>();
        plan.forEach((p, i) => {
          const answer = answers[i]!;
          if (p.genuine) {
            expect(answer.status, JSON.stringify(answer.body)).not.toBe(429);
            expect(answer.body.error_code).not.toBe('UNAUTHORIZED');
            expect(answer.headers.get('ratelimit-policy')).toMatch(/^"partner";q=\d+;w=\d+$/);
            expect(answer.headers.get('ratelimit')).toMatch(/^"partner";r=\d+;t=\d+$/);
            return;
          }
          expect(check(errorBody, answer.body).valid, JSON.stringify(answer.body)).toBe(true);
          if (answer.status === 429) {
            refusedForBudget++;
            expect(answer.body.error_code).toBe('RATE_LIMITED');
            expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          } else {
            expect(answer.body.error_code).toBe('UNAUTHORIZED');
            const key = p.source ?? 'own';
            failuresBySource.set(key, (failuresBySource.get(key) ?? 0) + 1);
          }
          expect(answer.headers.get('ratelimit-policy')).toMatch(/^"failed-auth";q=\d+;w=\d+$/);
        });
        // No source got more authentication errors than its budget allows in the time the flood took.
        const refilled = ((performance.now() - startedAt) / 1000) * limits.failedAuthentication.perSecond;
        for (const [key, failures] of failuresBySource)
          expect(failures, key).toBeLessThanOrEqual(limits.failedAuthentication.burst + Math.ceil(refilled) + 1);
      }),
      { seed: 1017, numRuns: 12 },
    );
    // The floods did exhaust failure budgets: the 429s above were reached, not assumed.
    expect(refusedForBudget).toBeGreaterThan(0);
  }, 180_000);
});

const APPS = ['ma_a', 'ma_b', 'ma_c', 'ma_d', 'ma_e', 'ma_f'] as const;
const behaviour: fc.Arbitrary<MiniappBehaviour> = fc.oneof(
  fc.constant<MiniappBehaviour>('hang'),
  fc.constant<MiniappBehaviour>('hang'),
  fc.constant<MiniappBehaviour>('fail'),
  fc.constant<MiniappBehaviour>('answer'),
  fc.integer({ min: 5, max: 150 }).map((slowMs): MiniappBehaviour => ({ slowMs })),
);
const scenario = fc.record({
  behaviours: fc.tuple(...APPS.map(() => behaviour)),
  backlogs: fc.tuple(...APPS.map(() => fc.integer({ min: 0, max: maxInFlightPerMiniapp + 8 }))),
  healthy: fc.integer({ min: 0, max: APPS.length - 1 }),
  ticksBefore: fc.integer({ min: 1, max: 3 }),
});

describeOnBackends('E6 fairness', (backend) => {
  describe('E6 delivery is fair between miniapps', () => {
    // A rig of its own for each test: what one leaves in the outbox, in flight or in the counts
    // of open attempts must not decide (or satisfy) the other's assertions.
    let rig: DeliveryRig;
    beforeEach(async () => {
      rig = await new DeliveryRig(APPS).start({ backend: backend.name });
    }, 60_000);
    afterEach(() => rig.stop(), 60_000);

    it('hanging, slow or failing miniapps never hold back a healthy one’s first attempt, and none exceeds x-max-in-flight', async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async ({ behaviours, backlogs, healthy, ticksBefore }) => {
          const healthyApp = APPS[healthy]!;
          APPS.forEach((app, i) => rig.behaviours.set(app, i === healthy ? 'answer' : behaviours[i]!));
          for (const [i, app] of APPS.entries()) if (i !== healthy) for (let n = 0; n < backlogs[i]!; n++) await rig.enqueue(app);
          for (let t = 0; t < ticksBefore; t++) {
            const claimed = await rig.worker.tick();
            for (const app of APPS)
              expect(claimed.filter((c) => c.delivery.app_id === app).length).toBeLessThanOrEqual(maxInFlightPerMiniapp);
          }

          // The loop claims again at once after any claim that leased something and waits for the
          // poll interval only after an empty one: the healthy delivery must be leased before any
          // claim comes back empty, within the claims the older backlog of miniapps below their
          // bound can fill.
          const deliveryId = await rig.enqueue(healthyApp);
          const batchSize = rig.platform.config.worker.batchSize;
          const mostClaims = Math.ceil((APPS.length * maxInFlightPerMiniapp) / batchSize) + 1;
          let claimedHealthy: ClaimedDelivery | undefined;
          for (let claim = 1; !claimedHealthy; claim++) {
            expect(claim, 'claims before the healthy delivery').toBeLessThanOrEqual(mostClaims);
            const next = await rig.worker.tick();
            expect(next.length, 'an empty claim before the healthy delivery: the loop would wait a poll interval').toBeGreaterThan(0);
            for (const app of APPS)
              expect(next.filter((c) => c.delivery.app_id === app).length, app).toBeLessThanOrEqual(maxInFlightPerMiniapp);
            claimedHealthy = next.find((c) => c.delivery.delivery_id === deliveryId);
          }
          const eventId = claimedHealthy.delivery.event_id;
          await until(() => rig.arrivals.some((a) => a.eventId === eventId), 20_000, `the healthy miniapp's first E6 (${eventId})`);

          // Drain: every miniapp answers, what is due goes out, nothing is left in flight.
          rig.releaseHanging();
          await rig.worker.settled();
          for (const app of APPS) rig.behaviours.set(app, 'answer');
          while ((await rig.worker.tick()).length > 0) await rig.worker.settled();
          await rig.worker.settled();
          for (const app of APPS) expect(rig.maxOpen.get(app) ?? 0, app).toBeLessThanOrEqual(maxInFlightPerMiniapp);
        }),
        { seed: 8008, numRuns: 15 },
      );
      // The scenarios did drive miniapps to their bound.
      expect(Math.max(...APPS.map((app) => rig.maxOpen.get(app) ?? 0))).toBe(maxInFlightPerMiniapp);
    }, 240_000);

    it('the running worker starts a healthy miniapp’s E6 while another miniapp’s attempts still hang', async () => {
      const [hanging, healthy] = ['ma_a', 'ma_b'] as const;
      rig.behaviours.set(hanging, 'hang');
      rig.behaviours.set(healthy, 'answer');
      for (let n = 0; n < maxInFlightPerMiniapp; n++) await rig.enqueue(hanging);
      rig.worker.start();
      rig.platform.wakeWorker();
      await until(() => rig.openNow(hanging) === maxInFlightPerMiniapp, 20_000, 'the hanging attempts to be open');
      const arrivalsBefore = rig.arrivals.length;
      await rig.enqueue(healthy);
      // The poll interval is 60 s: only the wake-up can start it, and a worker waiting for its
      // batch would wait for the hanging attempts' time-out first.
      rig.platform.wakeWorker();
      await until(() => rig.arrivals.slice(arrivalsBefore).some((a) => a.appId === healthy), 20_000, "the healthy miniapp's E6");
      expect(rig.openNow(hanging)).toBe(maxInFlightPerMiniapp);
      rig.releaseHanging();
      await rig.worker.stop();
    }, 60_000);
  });

  describe('a running worker hands each freed slot to its miniapp’s next due delivery (ADR 0033)', () => {
    // A rig of its own for each test: the stopping worker's test leaves deliveries leased and unleased behind.
    let rig: DeliveryRig;
    /** Deliveries leased by claims (the rest were handed on by the statements recording attempts). */
    let leasedByClaims = 0;
    beforeEach(async () => {
      rig = await new DeliveryRig(['ma_x', 'ma_y']).start({ backend: backend.name });
      leasedByClaims = 0;
      const claimDue = rig.store.outbox.claimDue.bind(rig.store.outbox);
      rig.store.outbox.claimDue = async (options) => {
        const claimed = await claimDue(options);
        leasedByClaims += claimed.length;
        return claimed;
      };
    }, 60_000);
    afterEach(() => rig.stop(), 60_000);

    it('drains deep backlogs through hand-offs, each delivery once, never past x-max-in-flight', async () => {
      const backlog = 3 * maxInFlightPerMiniapp;
      rig.behaviours.set('ma_x', { slowMs: 5 });
      rig.behaviours.set('ma_y', 'answer');
      const ids = new Set<string>();
      for (let n = 0; n < backlog; n++) for (const app of ['ma_x', 'ma_y']) ids.add(await rig.enqueue(app));
      rig.worker.start();
      rig.platform.wakeWorker();
      await until(() => rig.arrivals.length >= ids.size, 60_000, 'every E6 of the backlogs');
      await rig.worker.stop();
      expect(rig.arrivals).toHaveLength(ids.size);
      expect(new Set(rig.arrivals.map((a) => a.eventId)).size).toBe(ids.size);
      expect(rig.arrivals.every((a) => a.attempt === 1)).toBe(true);
      for (const app of ['ma_x', 'ma_y']) expect(rig.maxOpen.get(app) ?? 0, app).toBeLessThanOrEqual(maxInFlightPerMiniapp);
      expect(await rig.store.outbox.countPending()).toBe(0);
      // Claims filled each miniapp's slots once; every later delivery was handed a freed slot.
      expect(leasedByClaims).toBeLessThanOrEqual(2 * maxInFlightPerMiniapp);
    }, 90_000);

    it('a stopping worker hands nothing on: what it had not started stays in the outbox, unleased', async () => {
      rig.behaviours.set('ma_x', 'hang');
      for (let n = 0; n < 3 * maxInFlightPerMiniapp; n++) await rig.enqueue('ma_x');
      const arrivalsBefore = rig.arrivals.length;
      rig.worker.start();
      rig.platform.wakeWorker();
      await until(() => rig.openNow('ma_x') === maxInFlightPerMiniapp, 20_000, 'the bound of attempts to be open');
      const stopped = rig.worker.stop();
      rig.behaviours.set('ma_x', 'answer');
      rig.releaseHanging();
      await stopped;
      expect(rig.arrivals.length - arrivalsBefore).toBe(maxInFlightPerMiniapp);
      // The failed attempts wait for their retry; the rest were never leased, so a claim gets the whole bound.
      const claimed = await rig.store.outbox.claimDue({ limit: 50, leaseMs: 60_000, maxInFlightPerMiniapp });
      expect(claimed).toHaveLength(maxInFlightPerMiniapp);
      expect(claimed.every((c) => c.attempt === 1)).toBe(true);
    }, 60_000);
  });
});
