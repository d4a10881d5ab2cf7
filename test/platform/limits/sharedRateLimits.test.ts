/**
 * Rate limits hold across instances (ADR 0029): two platform instances sharing PostgreSQL, or
 * sharing Redis, allow the budget once, not twice. The budgets here refill at 0.001 per second,
 * so nothing refills while a test runs and every count is exact. Each Redis run uses a key
 * prefix of its own, so parallel files and reruns never share a bucket.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Config } from '../../../src/platform/config.js';
import { createStore } from '../../../src/platform/store/index.js';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import { backends, openTimeoutMs, type TestDatabase } from '../../support/databases.js';
import type { RegistryFile } from '../../../src/platform/registry/loadRegistry.js';
import { ADMIN_TOKEN, HOSTAPP, MINIAPP, PlatformHarness, type PlatformResponse } from '../../support/platformHarness.js';

const redisUrl = process.env.MINIBRIDGE_TEST_REDIS_URL ?? process.env.REDIS_URL;
const postgres = backends.find((backend) => backend.name === 'postgres')!;

const partnerBurst = 6;
const failedAuthBurst = 3;
const budgets: Partial<Config> = {
  rateLimit: { perSecond: 0.001, burst: partnerBurst },
  failedAuthLimit: { perSecond: 0.001, burst: failedAuthBurst },
};

const statusBody = (appId = MINIAPP.id) => ({ app_id: appId, client_id: HOSTAPP.id, order_payment_id: 'hop_unknown' });

/**
 * The miniapp whose genuine request the failed-authentication test makes: its partner budget is
 * its own, so the alternating test finds MINIAPP's six whichever of the two runs first (the
 * budgets refill at 0.001 per second, nothing comes back within the file).
 */
const GENUINE = { id: 'ma_genuine', secret: 'genuine-miniapp-secret' };
const withGenuine = (registry: RegistryFile) => {
  registry.miniapps.push({ ...structuredClone(registry.miniapps[0]!), app_id: GENUINE.id, secret_key: GENUINE.secret });
};

/** The same tests over any pair of instances that share their budgets. */
function twoInstanceTests(instances: () => [PlatformHarness, PlatformHarness]): void {
  test(`${partnerBurst} + 4 requests of one partner alternating between the instances: exactly 4 refused, RateLimit counts down across both`, async () => {
    const [a, b] = instances();
    const answers: PlatformResponse[] = [];
    for (let i = 0; i < partnerBurst + 4; i++)
      answers.push(await (i % 2 ? b : a).call('getPaymentStatus', statusBody(), { authorization: a.miniappAuth() }));
    expect(answers.map((answer) => answer.status === 429)).toEqual([...Array(partnerBurst).fill(false), ...Array(4).fill(true)]);
    expect(answers.slice(0, partnerBurst).every((answer) => answer.body.error_code !== 'UNAUTHORIZED')).toBe(true);
    // Each instance reports the one shared bucket: remaining falls by one per request wherever it went.
    expect(answers.map((answer) => /;r=(\d+);/.exec(answer.headers.get('ratelimit') ?? '')?.[1])).toEqual([
      ...Array.from({ length: partnerBurst }, (_, i) => String(partnerBurst - 1 - i)),
      ...Array(4).fill('0'),
    ]);
    expect(new Set(answers.map((answer) => answer.headers.get('ratelimit-policy')))).toEqual(
      new Set([`"partner";q=${partnerBurst};w=${partnerBurst * 1000}`]),
    );
    expect(answers.at(-1)!.body.error_code).toBe('RATE_LIMITED');
    expect(Number(answers.at(-1)!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  test(`${partnerBurst} + 5 admin requests fired at once over both instances: exactly 5 answered 429`, async () => {
    const [a, b] = instances();
    const answers = await Promise.all(
      Array.from({ length: partnerBurst + 5 }, (_, i) =>
        (i % 2 ? b : a).call('listDeliveries', undefined, { authorization: `Bearer ${ADMIN_TOKEN}` }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(5);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(partnerBurst);
  });

  test(`the failed-authentication budget of a source is shared: ${failedAuthBurst} refusals over both, then 429 on both; correct credentials still count on the partner's budget`, async () => {
    const [a, b] = instances();
    const wrong = basicAuthorization(HOSTAPP.id, 'not-the-secret');
    const answers: PlatformResponse[] = [];
    for (let i = 0; i < failedAuthBurst + 3; i++)
      answers.push(await (i % 2 ? b : a).call('getPaymentStatus', statusBody(), { authorization: wrong }));
    expect(answers.map((answer) => answer.body.error_code)).toEqual([
      ...Array(failedAuthBurst).fill('UNAUTHORIZED'),
      ...Array(3).fill('RATE_LIMITED'),
    ]);
    expect(answers.map((answer) => answer.headers.get('ratelimit-policy'))).toEqual(
      Array(failedAuthBurst + 3).fill(`"failed-auth";q=${failedAuthBurst};w=${failedAuthBurst * 1000}`),
    );
    // Correct credentials from the same address are counted on the partner's budget, not refused.
    const genuine = await b.call('getPaymentStatus', statusBody(GENUINE.id), {
      authorization: basicAuthorization(GENUINE.id, GENUINE.secret),
    });
    expect(genuine.headers.get('ratelimit-policy')).toMatch(/^"partner";/);
  });
}

describe.skipIf(postgres.skip)('two instances sharing PostgreSQL', () => {
  let database: TestDatabase;
  const a = new PlatformHarness();
  const b = new PlatformHarness();
  beforeAll(async () => {
    database = await postgres.open();
    const open = async () => createStore(await database.connect());
    await Promise.all([
      a.start({ config: budgets, store: open(), registry: withGenuine }),
      b.start({ config: budgets, store: open(), registry: withGenuine }),
    ]);
  }, openTimeoutMs);
  afterAll(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await database?.dispose();
  }, openTimeoutMs);

  twoInstanceTests(() => [a, b]);
});

describe.skipIf(!redisUrl)('two instances sharing Redis', () => {
  const a = new PlatformHarness();
  const b = new PlatformHarness();
  beforeAll(async () => {
    // Redis's answer may take longer than the instance's 250 ms while the suites load the machine;
    // a late answer would count the request on the instance's own budget and split the count.
    const config = {
      ...budgets,
      redisUrl,
      redisKeyPrefix: `minibridge-test:${randomBytes(8).toString('hex')}:`,
      redisCommandTimeoutMs: 10_000,
    };
    await Promise.all([a.start({ config, registry: withGenuine }), b.start({ config, registry: withGenuine })]);
    // Two PGlite platforms start at once here: on a machine busy with other suites that took
    // 50-60 s, so the bound on a stuck start is twice one database's.
  }, 2 * openTimeoutMs);
  afterAll(() => Promise.all([a.stop(), b.stop()]), openTimeoutMs);

  twoInstanceTests(() => [a, b]);
});

describe('Redis unreachable: each instance counts its own budget and says so', () => {
  const a = new PlatformHarness();
  beforeAll(async () => {
    // Port 1 on the loopback: nothing listens, the connection is refused at once.
    await a.start({ config: { ...budgets, redisUrl: 'redis://127.0.0.1:1', redisKeyPrefix: 'unused:' } });
  }, openTimeoutMs);
  afterAll(() => a.stop(), openTimeoutMs);

  test('requests are served and limited per instance; the fallback metric counts them', async () => {
    const answers: PlatformResponse[] = [];
    for (let i = 0; i < partnerBurst + 2; i++)
      answers.push(await a.call('getPaymentStatus', statusBody(), { authorization: a.miniappAuth() }));
    expect(answers.map((answer) => answer.status === 429)).toEqual([...Array(partnerBurst).fill(false), true, true]);
    const metrics = await (await fetch(`${a.running.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`minibridge_rate_limit_fallbacks_total\\{store="redis"\\} ${partnerBurst + 2}\\b`));
  });
});
