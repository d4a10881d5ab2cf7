/**
 * The records worker (ADR 0041) around a store it cannot tell from a real one: it closes due days,
 * purges one bounded batch per kind of record with the periods in force, rests after each batch
 * in proportion to its time, and does nothing while the database is down (the store's
 * availability), resuming when it is back. Waits are bounded; no timing is asserted.
 */
import { pino } from 'pino';
import { expect, test } from 'vitest';
import { retentionBounds, retentionKinds } from '../../../src/contract/records.js';
import type { PlatformContext } from '../../../src/platform/context.js';
import { createMetrics } from '../../../src/platform/observability/metrics.js';
import { RecordsWorker } from '../../../src/platform/records/worker.js';
import { DatabaseUnavailableError, type PurgeKind } from '../../../src/platform/store/index.js';

const DAY = 86_400_000;

function rig(options: { up: boolean; batch: number }) {
  let up = options.up;
  let wake: (() => void) | undefined;
  const purges: { kind: PurgeKind; periodMs: number; limit: number }[] = [];
  let failNext = false;
  let daysToClose = 2;
  const availability = {
    get up() {
      return up;
    },
    whenUp: (signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        if (up) return resolve();
        wake = resolve;
        signal?.addEventListener('abort', () => reject(new Error('stopped')));
      }),
  };
  const periods = Object.fromEntries(retentionKinds.map((kind) => [kind, retentionBounds()[kind].default]));
  const platform = {
    config: { retention: periods, records: { pollMs: 5, batchSize: options.batch, restRatio: 1, enabled: true } },
    store: {
      db: { availability },
      statements: { closeNextDay: async () => (daysToClose-- > 0 ? true : false) },
      retention: {
        purge: async (kind: PurgeKind, periodMs: number, limit: number) => {
          if (failNext) {
            failNext = false;
            up = false;
            throw new DatabaseUnavailableError('the database connection failed');
          }
          purges.push({ kind, periodMs, limit });
          return 0;
        },
      },
    },
    metrics: createMetrics({ pendingDeliveries: async () => 0, stuckPayments: async () => 0 }),
    log: pino({ level: 'silent' }),
  } as unknown as PlatformContext;
  return {
    platform,
    purges,
    setUp() {
      up = true;
      wake?.();
    },
    failNextPurge() {
      failNext = true;
    },
  };
}

async function eventually(what: string, probe: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('one round: due days closed, then one batch of each kind with its period in force, a rest after each', async () => {
  const { platform, purges } = rig({ up: true, batch: 250 });
  const rests: number[] = [];
  const round = await new RecordsWorker(platform).round(async (tookMs) => void rests.push(tookMs));
  expect(round.daysClosed).toBe(2);
  expect(purges).toEqual(retentionKinds.map((kind) => ({ kind, periodMs: retentionBounds()[kind].default * DAY, limit: 250 })));
  expect(rests).toHaveLength(2 + retentionKinds.length);
  expect(rests.every((ms) => ms >= 0)).toBe(true);
  const metrics = await platform.metrics.registry.getSingleMetricAsString('minibridge_purge_batches_total');
  expect(metrics).toContain('kind="financial_record"} 1');
});

test('the purge does nothing while the database is down and resumes when it is back', async () => {
  const subject = rig({ up: false, batch: 10 });
  const worker = new RecordsWorker(subject.platform);
  worker.start();
  try {
    // Down from the start: several poll intervals pass without a batch.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(subject.purges).toHaveLength(0);
    subject.setUp();
    await eventually('a round after the database came back', () => subject.purges.length >= retentionKinds.length);
    // It goes down mid-round: the failed batch stops the round, and nothing runs until it is back.
    subject.failNextPurge();
    await eventually('the outage seen', () => !subject.platform.store.db.availability.up);
    const before = subject.purges.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(subject.purges.length).toBe(before);
    subject.setUp();
    await eventually('purging again', () => subject.purges.length > before);
  } finally {
    await worker.stop();
  }
});
