import { setTimeout as sleep } from 'node:timers/promises';
import type { components } from '../../../generated/types/miniapp.js';
import type { JsonText } from '../../contract/json.js';
import { operation } from '../../contract/operations.js';
import { deliverOrderCompletion } from '../outbound/miniappCalls.js';
import type { PlatformContext } from '../context.js';
import { DatabaseUnavailableError, type AttemptRecord, type ClaimedDelivery, type Clock, type RecordedAttempt } from '../store/index.js';
import { checkLease, deliveryLimits } from './deliveryLimits.js';
import { nextAttemptAt, retrySchedule } from './retrySchedule.js';

type OrderCompletion = components['schemas']['OrderCompletion'];

export interface DeliveryWorkerOptions {
  /** The time attempts are stamped and scheduled with; the store's clock in tests. */
  clock?: Clock;
  /** Jitter source of the retry schedule. */
  random?: () => number;
}

/**
 * Delivers E6 callbacks from the outbox (ADR 0008): claims due deliveries under a lease (so
 * instances sharing PostgreSQL never deliver the same attempt twice), makes one attempt each,
 * and records the outcome with the next attempt's time or, past the 72-hour horizon, `dead`.
 * A delivery counts only when the miniapp server answers HTTP 200 with `code` and no `error_code`.
 *
 * Fair: attempts run side by side and are never awaited as a batch, so a miniapp that hangs
 * delays nobody else; each miniapp has at most `x-max-in-flight` attempts open (the claim leases
 * no more), and a claim leases only what starts at once.
 *
 * Slots handed on (ADR 0033): while the loop runs, the statement recording an attempt leases
 * its miniapp's next due delivery in the slot it frees, and that attempt starts at once, so a
 * backlog drains without claims. Claims (a locked transaction) start backlogs and new work: a
 * finished attempt wakes the loop only once its miniapp's attempts open on this instance have
 * fallen to the refill mark (half the bound, ADR 0026), which with hand-offs happens when its
 * backlog ends. Below the mark every finished attempt wakes the loop, as do new deliveries and
 * the poll interval.
 */
export class DeliveryWorker {
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  /** A wake-up that came while the worker was not idle: the next idle returns at once. */
  private wokenEarly = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts open on this instance per miniapp (app_id). */
  private readonly openByMiniapp = new Map<string, number>();
  private answersPrepared = false;
  /** Aborted by stop(): ends the waits for the database. */
  private stopping = new AbortController();
  /** A finished attempt wakes the loop when its miniapp has at most this many open here. */
  private readonly refillMark: number;
  private readonly schedule = retrySchedule();
  private readonly limits = deliveryLimits();
  private readonly clock: Clock;
  private readonly random: () => number;

  constructor(
    private readonly platform: PlatformContext,
    options: DeliveryWorkerOptions = {},
  ) {
    checkLease(platform.config.worker.leaseMs, this.limits);
    this.clock = options.clock ?? (() => new Date());
    this.random = options.random ?? Math.random;
    const bound = this.limits.maxInFlightPerMiniapp;
    this.refillMark = bound - Math.max(1, Math.floor(bound / 2));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new AbortController();
    this.loop = this.run();
  }

  /** Stops claiming, then waits for the attempts in flight (each ends within the E6 time-out). */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    this.wake();
    await this.loop;
    await this.settled();
  }

  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.wokenEarly = true;
  }

  /** Attempts in flight on this instance. */
  get attemptsInFlight(): number {
    return this.inFlight.size;
  }

  /** Resolves when every attempt started so far has been recorded. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /**
   * One round: claims what is due and may start, and starts it without waiting for it. Returns
   * the deliveries started. The loop runs this every poll interval, and at once when woken (a
   * delivery was queued, or an attempt finished and freed its miniapp's slot). With `ifDue`
   * (a poll that nothing woke), one indexed read first asks whether anything is due at all, and
   * the claim's locked transaction runs only when something is: an idle instance's poll is then
   * one statement instead of four (ADR 0046).
   */
  async tick({ ifDue = false }: { ifDue?: boolean } = {}): Promise<ClaimedDelivery[]> {
    const { batchSize, leaseMs } = this.platform.config.worker;
    // Leases taken by statements whose answer the database lost are found first (ADR 0037).
    const recovered = await this.platform.store.outbox.recoverLeases({ leaseMs });
    if (recovered.length > 0) this.prepareAnswers();
    for (const delivery of recovered) this.track(delivery);
    if (ifDue && !(await this.platform.store.outbox.anyDue())) return recovered;
    const claimed = await this.platform.store.outbox.claimDue({
      limit: batchSize,
      leaseMs,
      maxInFlightPerMiniapp: this.limits.maxInFlightPerMiniapp,
    });
    if (claimed.length > 0) this.prepareAnswers();
    for (const delivery of claimed) this.track(delivery);
    return [...recovered, ...claimed];
  }

  /**
   * Compiles the contract's validator of the E6 answer before the first attempt starts (ADR
   * 0033). Validators compile on first use (ADR 0026), and the first one compiled also compiles
   * the JSON Schema meta-schema: done on the first answer, that stalled every attempt then open,
   * each holding its lease and slot, for as long as compiling took (about 100 ms).
   */
  private prepareAnswers(): void {
    if (this.answersPrepared) return;
    this.answersPrepared = true;
    // The call compiles the validator; its verdict on an empty object does not matter.
    operation('receiveOrderCompletion').responses.get('200')?.validate?.({});
  }

  private async run(): Promise<void> {
    const { pollMs } = this.platform.config.worker;
    const { availability } = this.platform.store.db;
    // Whether the last wait ended with the poll interval rather than a wake-up.
    let polled = false;
    while (this.running) {
      // While the database is down nothing can be claimed: wait for it rather than poll it
      // (ADR 0037). The store has reported the outage; the worker says only that it waits.
      if (!availability.up) {
        this.platform.log.warn('E6 worker paused: the database is unavailable; it resumes when the database answers');
        await availability.whenUp(this.stopping.signal).catch(() => undefined);
        if (this.running) this.platform.log.info('E6 worker resumed');
        continue;
      }
      let claimed = 0;
      try {
        claimed = (await this.tick({ ifDue: polled })).length;
      } catch (error) {
        if (!(error instanceof DatabaseUnavailableError))
          this.platform.log.error({ err: error }, 'E6 worker cycle failed; retrying after the poll interval');
      }
      // Anything claimed means more may be due (a claim ranks a bounded window): claim again
      // at once; an empty claim waits for the poll interval or a wake-up.
      polled = claimed === 0 && this.running ? await this.idle(pollMs) : false;
    }
  }

  private track(claimed: ClaimedDelivery): void {
    const appId = claimed.delivery.app_id;
    this.openByMiniapp.set(appId, (this.openByMiniapp.get(appId) ?? 0) + 1);
    const attempt: Promise<void> = this.attempt(claimed)
      .catch((error: unknown) => {
        // The lease runs out and the delivery is tried again: at least once holds.
        this.platform.log.error(
          { err: error, delivery_id: claimed.delivery.delivery_id },
          'E6 attempt could not be recorded; it is retried when its lease ends',
        );
      })
      .finally(() => {
        this.inFlight.delete(attempt);
        const open = this.openByMiniapp.get(appId)! - 1;
        if (open === 0) this.openByMiniapp.delete(appId);
        else this.openByMiniapp.set(appId, open);
        if (open <= this.refillMark) this.wake();
      });
    this.inFlight.add(attempt);
  }

  /** Waits for the poll interval or a wake-up; true when the interval ended it. */
  private idle(ms: number): Promise<boolean> {
    if (this.wokenEarly) {
      this.wokenEarly = false;
      return Promise.resolve(false);
    }
    const controller = new AbortController();
    this.wakeUp = () => controller.abort();
    return sleep(ms, undefined, { signal: controller.signal })
      .then(
        () => true,
        () => false,
      )
      .finally(() => (this.wakeUp = undefined));
  }

  /**
   * Records an attempt's outcome. While the loop runs, the slot this attempt frees passes straight
   * to its miniapp's next due delivery in the statement that records it (ADR 0033); a stopping
   * worker only records. When the database is down the outcome is kept and recorded once it is
   * back, for as long as the lease lasts (ADR 0037): a miniapp that acknowledged during an outage
   * is not called again for it. Past the lease, the attempt is left to be counted lost and retried.
   */
  private async record(record: AttemptRecord, startedAt: Date): Promise<RecordedAttempt> {
    const { outbox, db } = this.platform.store;
    const { leaseMs } = this.platform.config.worker;
    // A second short of the lease's end, so the record never races another instance's claim.
    const leaseEnds = startedAt.getTime() + leaseMs - 1_000;
    for (;;) {
      try {
        return this.running
          ? await outbox.recordAndHandOff(record, { leaseMs })
          : { delivery: await outbox.recordAttempt(record), successors: [] };
      } catch (error) {
        const left = leaseEnds - this.clock().getTime();
        if (!(error instanceof DatabaseUnavailableError) || left <= 0 || this.stopping.signal.aborted) throw error;
        const waiting = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(left)]);
        await db.availability.whenUp(waiting).catch(() => undefined);
        if (!db.availability.up) throw error;
      }
    }
  }

  private async attempt(claimed: ClaimedDelivery): Promise<void> {
    const { delivery } = claimed;
    const startedAt = this.clock();
    const miniapp = this.platform.registry.miniapp(delivery.app_id);
    // The outbox holds the E6 body as orderCompletionBody serialised it: sent as stored, never re-serialised.
    const body = claimed.body as JsonText<OrderCompletion>;
    // A failed attempt past the schedule's horizon ends the delivery dead when it is recorded; a
    // lost one is recorded by the next lease, which is taken at once, whatever the horizon. So an
    // attempt after a lost one past the horizon is not made (ADR 0008): a delivery whose attempts
    // keep being lost (an instance that stops whenever it makes them) ends dead like any other,
    // instead of being sent at every lease's end for ever.
    const horizonEnded = startedAt.getTime() > Date.parse(claimed.horizon_started_at) + this.schedule.horizonMs;
    const answer =
      claimed.follows_lost_attempt && horizonEnded
        ? notMade(
            `not made: the attempt before it was lost and the delivery's ${this.schedule.horizonMs / 3_600_000}-hour schedule has ended`,
          )
        : miniapp
          ? await deliverOrderCompletion(this.platform, miniapp, body, delivery.event_id, claimed.attempt)
          : notMade(`miniapp ${delivery.app_id} is no longer registered`);
    const refusal = answer.ok && 'error_code' in answer.body ? answer.body.error_code : undefined;
    const acknowledged = answer.ok && refusal === undefined;
    const error = answer.ok ? (acknowledged ? undefined : `the miniapp server answered error_code ${refusal}`) : answer.failure.detail;
    const httpStatus = answer.ok ? answer.status : 'status' in answer.failure ? answer.failure.status : undefined;
    const retryAt = acknowledged
      ? null
      : nextAttemptAt(this.schedule, claimed.schedule_attempt, new Date(claimed.horizon_started_at), this.clock(), this.random);
    const record: AttemptRecord = {
      delivery_id: delivery.delivery_id,
      lease_id: claimed.lease_id,
      started_at: startedAt,
      duration_ms: answer.durationMs,
      result: acknowledged
        ? { outcome: 'delivered', http_status: httpStatus ?? 200 }
        : { outcome: 'failed', http_status: httpStatus, error: error ?? 'failed', retry_at: retryAt },
    };
    const { delivery: recorded, successors } = await this.record(record, startedAt);
    // Started before this attempt counts as ended, so settled() and stop() wait for them too.
    for (const successor of successors) this.track(successor);
    const outcome = acknowledged ? 'delivered' : retryAt ? 'retry' : 'dead';
    this.platform.metrics.deliveries.inc({ outcome });
    const fields = { delivery_id: delivery.delivery_id, event_id: delivery.event_id, attempt: claimed.attempt, outcome };
    if (!recorded)
      this.platform.log.warn(
        fields,
        'E6 attempt not recorded by this instance: its lease passed to another instance, or an earlier try of the record committed before the database lost its answer',
      );
    else if (outcome === 'delivered') this.platform.log.info(fields, 'E6 delivered');
    else this.platform.log.warn({ ...fields, error, next_attempt_at: retryAt }, 'E6 attempt failed');
  }
}

/** An attempt the worker did not make, recorded as failed for `detail`. */
function notMade(detail: string) {
  return { ok: false, failure: { kind: 'unreachable', detail }, durationMs: 0 } as const;
}
