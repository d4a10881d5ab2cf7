import { describe, expect, it } from 'vitest';
import { plan, renderPlan, superAppDemand, type Demand } from '../../bench/capacity.js';
import type { CapacityFigures } from '../../bench/report.js';

const op = (operation: string, platformCpuMs: number, postgresCpuMs: number, walBytes: number, storedBytes: number) => ({
  operation,
  platformCpuMs,
  postgresCpuMs,
  walBytes,
  storedBytes,
  source: 'test',
});

/** Round figures, so every result below can be worked out by hand. */
const figures: CapacityFigures = {
  operations: [
    op('E1', 0.2, 0.1, 2048, 2000),
    op('E2', 0.1, 0.02, 0, 0),
    op('E5', 0.1, 0.1, 1024, 1000),
    op('E6', 0.1, 0.1, 1024, 500),
    op('E8', 0.1, 0.05, 512, 400),
    op('miniapp event', 0.1, 0.05, 512, 400),
  ],
  connectionsPerInstance: { observed: 12, pool: 20 },
  e6PerSecond: 1000,
};

const demand = (payments: number, largestMiniappShare = 0.1, outageSeconds = 0): Demand => {
  const rates = { E1: payments, E2: 5 * payments, E5: payments, E6: payments, E8: payments, 'miniapp event': payments };
  return { perSecond: rates, meanPerSecond: rates, largestMiniappShare, outageSeconds };
};

describe('the capacity model', () => {
  it('adds up the cores, WAL and storage the operations cost at their rates', () => {
    const p = plan(figures, demand(1000));
    // 1000 × (0.2 + 5 × 0.1 + 0.1 + 0.1 + 0.1 + 0.1) ms = 1.1 s of platform CPU per second.
    expect(p.platformCores).toBeCloseTo(1.1);
    // 1000 × (0.1 + 5 × 0.02 + 0.1 + 0.1 + 0.05 + 0.05) ms = 0.5 cores of PostgreSQL.
    expect(p.postgresCores).toBeCloseTo(0.5);
    // (2048 + 1024 + 1024 + 512 + 512) × 1000 bytes per second = 5 MiB/s… as 5,120,000 / 2^20.
    expect(p.walMiBPerSecond).toBeCloseTo(5_120_000 / 2 ** 20);
    // (2000 + 1000 + 500 + 400 + 400) bytes × 1000/s × 86,400 s.
    expect(p.storedGiBPerDay).toBeCloseTo((4300 * 1000 * 86_400) / 2 ** 30);
  });

  it('plans each instance at 60% of a core, plus one to lose, and a pool per instance', () => {
    const p = plan(figures, demand(1000));
    // 1.1 ÷ 0.6 = 1.83 → 2, plus one.
    expect(p.instances).toBe(3);
    expect(p.connections).toBe(60);
    // 0.5 ÷ 0.6 = 0.83 → at least 2 vCPUs.
    expect(p.postgresVcpus).toBe(2);
    expect(plan(figures, demand(10_000)).postgresVcpus).toBe(16);
  });

  it("drains a backlog no faster than the spare cores, one instance, or one miniapp's x-max-in-flight allow, less the E6s still coming", () => {
    // The largest miniapp takes 10% of 1000 payments/s: 100 E6/s live; a 200-second outage queues 20,000.
    // 3 instances × 0.9 − 1.1 cores = 1.6 cores spare ÷ 0.1 ms per E6 = 16,000/s; one instance 1,000/s;
    // one miniapp 16 × (1000 ÷ 50 ms) = 320/s: the miniapp bound decides, 220/s net.
    const p = plan(figures, demand(1000, 0.1, 200));
    expect(p.backlog).toMatchObject({
      livePerSecond: 100,
      queued: 20_000,
      perMiniappLimitPerSecond: 320,
      decidedBy: "the miniapp's x-max-in-flight",
    });
    expect(p.backlog.spareE6PerSecond).toBeCloseTo(16_000);
    expect(p.backlog.netPerSecond).toBeCloseTo(220);
    expect(p.backlog.seconds).toBeCloseTo(20_000 / 220);
    // An instance that drains only 150/s decides instead: a miniapp's slots stay on one instance.
    const slow = plan({ ...figures, e6PerSecond: 150 }, demand(1000, 0.1, 200)).backlog;
    expect(slow.decidedBy).toBe("one instance's drain rate");
    expect(slow.seconds).toBeCloseTo(20_000 / 50);
  });

  it('says a backlog never drains when the miniapp gets E6s as fast as its bound lets them through', () => {
    const p = plan(figures, demand(1000, 0.4, 60));
    expect(p.backlog.livePerSecond).toBe(400);
    expect(p.backlog.netPerSecond).toBeLessThan(0);
    expect(p.backlog.seconds).toBe(Number.POSITIVE_INFINITY);
    expect(renderPlan(figures, demand(1000, 0.4, 60), 'a test')).toContain('more than it can be sent');
  });

  it("tells when the pools outgrow PostgreSQL's default max_connections", () => {
    expect(renderPlan(figures, demand(1000), 'a test')).toContain('within PostgreSQL');
    expect(renderPlan(figures, demand(3000), 'a test')).toContain('Set it to at least');
  });

  it('refuses a demand for an operation the run did not measure', () => {
    const partial = { ...figures, operations: figures.operations.filter((o) => o.operation !== 'E2') };
    expect(() => plan(partial, demand(10))).toThrow(/no E2/);
  });

  it('states the worked example: 10 million payments a day, a peak of ten times the mean, five E2 each', () => {
    const example = superAppDemand();
    expect(example.perSecond.E1).toBeCloseTo((10 * 10_000_000) / 86_400);
    expect(example.perSecond.E2).toBeCloseTo(5 * example.perSecond.E1);
    expect(example.meanPerSecond.E1).toBeCloseTo(10_000_000 / 86_400);
    expect(example.largestMiniappShare).toBe(0.2);
    expect(example.outageSeconds).toBe(900);
    expect(renderPlan(figures, example, 'a test')).toContain('| **total** |');
    expect(renderPlan(figures, example, 'a test')).toContain('(`bench/results/latest.json`)');
    expect(renderPlan(figures, example, 'a test', 'bench/results/run-x.json')).toContain('(`bench/results/run-x.json`)');
  });
});
