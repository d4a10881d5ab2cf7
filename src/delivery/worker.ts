import { setTimeout as sleep } from 'node:timers/promises';
import type { components } from '../../generated/types/miniapp.js';
import { parseLossless } from '../contract/json.js';
import { deliverOrderCompletion } from '../partners/miniappCalls.js';
import type { Platform } from '../platform.js';
import type { ClaimedDelivery } from '../store/index.js';
import { nextAttemptAt, retrySchedule } from './retrySchedule.js';

type OrderCompletion = components['schemas']['OrderCompletion'];

/**
 * Delivers E6 callbacks from the outbox (ADR 0008): claims due deliveries under a lease (so
 * instances sharing PostgreSQL never deliver the same attempt twice), makes one attempt each,
 * and records the outcome with the next attempt's time or, past the 72-hour horizon, `dead`.
 * A delivery counts only when the miniapp server answers HTTP 200 with `code` and no `error_code`.
 */
export class DeliveryWorker {
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private readonly schedule = retrySchedule();

  constructor(private readonly platform: Platform) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Finishes the attempts in hand, then stops claiming. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
  }

  wake(): void {
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    const { pollMs, batchSize, leaseMs } = this.platform.config.worker;
    while (this.running) {
      let claimed: ClaimedDelivery[] = [];
      try {
        claimed = await this.platform.store.outbox.claimDue({ limit: batchSize, leaseMs });
        await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
      } catch (error) {
        this.platform.log.error({ err: error }, 'E6 worker cycle failed; retrying after the poll interval');
        claimed = [];
      }
      if (claimed.length === 0 && this.running) await this.idle(pollMs);
    }
  }

  private idle(ms: number): Promise<void> {
    const controller = new AbortController();
    this.wakeUp = () => controller.abort();
    return sleep(ms, undefined, { signal: controller.signal }).catch(() => undefined).finally(() => (this.wakeUp = undefined));
  }

  private async attempt(claimed: ClaimedDelivery): Promise<void> {
    const { delivery } = claimed;
    const startedAt = new Date();
    const miniapp = this.platform.registry.miniapp(delivery.app_id);
    const answer = miniapp
      ? await deliverOrderCompletion(miniapp, parseLossless(claimed.body) as OrderCompletion, delivery.event_id, claimed.attempt)
      : ({ ok: false, failure: { kind: 'unreachable', detail: `miniapp ${delivery.app_id} is no longer registered` }, durationMs: 0 } as const);
    const acknowledged = answer.ok && hasCodeWithoutError(answer.body);
    const error = answer.ok ? (acknowledged ? undefined : `the miniapp server answered error_code ${(answer.body as { error_code?: string }).error_code}`) : answer.failure.detail;
    const httpStatus = answer.ok ? answer.status : 'status' in answer.failure ? answer.failure.status : undefined;
    const retryAt = acknowledged ? null : nextAttemptAt(this.schedule, claimed.attempt, new Date(claimed.horizon_started_at), new Date());
    const recorded = await this.platform.store.outbox.recordAttempt({
      delivery_id: delivery.delivery_id,
      lease_id: claimed.lease_id,
      started_at: startedAt,
      duration_ms: answer.durationMs,
      result: acknowledged ? { outcome: 'delivered', http_status: httpStatus ?? 200 } : { outcome: 'failed', http_status: httpStatus, error: error ?? 'failed', retry_at: retryAt },
    });
    const outcome = acknowledged ? 'delivered' : retryAt ? 'retry' : 'dead';
    this.platform.metrics.deliveries.inc({ outcome });
    const fields = { delivery_id: delivery.delivery_id, event_id: delivery.event_id, attempt: claimed.attempt, outcome };
    if (!recorded) this.platform.log.warn(fields, 'E6 attempt made after the lease was lost; another instance owns the delivery now');
    else if (outcome === 'delivered') this.platform.log.info(fields, 'E6 delivered');
    else this.platform.log.warn({ ...fields, error, next_attempt_at: retryAt }, 'E6 attempt failed');
  }
}

function hasCodeWithoutError(body: unknown): boolean {
  const answer = body as { code?: unknown; error_code?: unknown };
  return typeof answer.code === 'string' && answer.error_code === undefined;
}
