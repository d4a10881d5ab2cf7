import { setTimeout as sleep } from 'node:timers/promises';
import { retentionKinds } from '../../contract/records.js';
import type { PlatformContext } from '../context.js';
import { DatabaseUnavailableError, type PurgeKind } from '../store/index.js';

const DAY_MS = 86_400_000;

/** What one round did. */
export interface RecordsRound {
  daysClosed: number;
  purged: Partial<Record<PurgeKind, number>>;
}

/**
 * The records worker (ADR 0041), on every instance: closes statement days as they fall due (one
 * instance closes each, in order) and ages records out by the retention periods in force, one
 * bounded batch per kind at a time. It rests `restRatio` times as long as each batch took, so
 * the purge takes a bounded share of the database however much is due, and it waits while the
 * database is down (the store's availability, ADR 0037) instead of failing batches.
 */
export class RecordsWorker {
  private running = false;
  private loop: Promise<void> | undefined;
  private stopping = new AbortController();
  constructor(private readonly platform: PlatformContext) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new AbortController();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    await this.loop;
  }

  /**
   * One round: every due day closed, then one batch of each kind. `rest` runs after each batch
   * with the time it took (the loop rests proportionally; tests pass nothing).
   */
  async round(rest: (tookMs: number) => Promise<void> = async () => undefined): Promise<RecordsRound> {
    const { store, metrics, config } = this.platform;
    const result: RecordsRound = { daysClosed: 0, purged: {} };
    for (;;) {
      const started = performance.now();
      if (!(await store.statements.closeNextDay())) break;
      result.daysClosed += 1;
      metrics.statementDaysClosed.inc();
      await rest(performance.now() - started);
    }
    for (const kind of retentionKinds) {
      const started = performance.now();
      const count = await store.retention.purge(kind, config.retention[kind] * DAY_MS, config.records.batchSize);
      metrics.purgeBatches.inc({ kind });
      if (count > 0) metrics.recordsPurged.inc({ kind }, count);
      result.purged[kind] = count;
      await rest(performance.now() - started);
    }
    return result;
  }

  private async run(): Promise<void> {
    const { availability } = this.platform.store.db;
    const { pollMs, restRatio, batchSize } = this.platform.config.records;
    while (this.running) {
      if (!availability.up) {
        await availability.whenUp(this.stopping.signal).catch(() => undefined);
        continue;
      }
      let busy = false;
      try {
        const round = await this.round((tookMs) => this.pause(tookMs * restRatio));
        // A full batch means more is due: go on at once (after the rests); otherwise wait for the poll.
        busy = Object.values(round.purged).some((count) => count >= batchSize);
      } catch (error) {
        if (!(error instanceof DatabaseUnavailableError))
          this.platform.log.error({ err: error }, 'records round failed (statements or retention purge); retrying after the poll interval');
      }
      if (!busy) await this.pause(pollMs);
    }
  }

  private pause(ms: number): Promise<void> {
    if (!this.running || ms <= 0) return Promise.resolve();
    return sleep(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }
}
