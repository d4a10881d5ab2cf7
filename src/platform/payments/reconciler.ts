import { setTimeout as sleep } from 'node:timers/promises';
import type { PlatformContext } from '../context.js';
import { answerLimits } from '../outbound/partnerCall.js';
import { backoffDelay } from '../store/availability.js';
import { DatabaseUnavailableError, type AskRecord, type Clock, type ReconcileClaim } from '../store/index.js';
import { nextAsk, reconcilePolicy, type ReconcilePolicy } from './lifecycle.js';
import { settle } from './settlement.js';
import { askHostappStatus } from './statusQuery.js';

export interface ReconcilerOptions {
  /** The time asks are stamped and scheduled with; the store's clock in tests. */
  clock?: Clock;
  /** Jitter source of the schedules. */
  random?: () => number;
}

/** A host app this instance has stopped asking for a while, because it did not answer. */
interface BackingOff {
  failures: number;
  until: number;
}

/**
 * Active reconciliation (ADR 0039): payments left `in_process` without an E5 are asked about at
 * the host app (E4) by the platform itself, on the schedule the contract publishes
 * (`x-reconciliation` on E4). A terminal answer is applied exactly as an E5 is (the one state
 * machine: one transition, one E6), recorded as set by reconciliation; a payment the host app
 * still calls `in_process` after its expiry is stuck: counted, logged, listed in the dashboard,
 * and asked on the slow schedule until the final horizon. The platform never invents an outcome.
 *
 * Bounded and fair, like the E6 worker: an instance leases the payments it asks about (one
 * instance per payment at a time, across restarts); each host app has at most `maxInFlight`
 * asks open across instances (the claim counts leases) and `perSecond` started (the shared rate
 * limit budget); a host app that fails to answer is paused by this instance on a jittered
 * back-off; asks run side by side, never awaited as a batch, so a slow host app delays nobody.
 */
export class Reconciler {
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private wokenEarly = false;
  private stopping = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly backingOff = new Map<string, BackingOff>();
  /**
   * Host apps whose per-second budget this instance found spent, until it refills: not claimed
   * meanwhile, so a backlog larger than the budget waits instead of being claimed and postponed
   * in a loop (which kept the database busy and, on PGlite's one session, starved every request).
   */
  private readonly budgetSpent = new Map<string, number>();
  /** Asks this instance has open per host app: one at its cap is not claimed for here either. */
  private readonly askingPerHostapp = new Map<string, number>();
  private readonly policy: ReconcilePolicy = reconcilePolicy();
  private readonly clock: Clock;
  private readonly random: () => number;
  /** A lease outlives its ask: the E4 time-out, the budget's wait and the records, with room. */
  readonly leaseMs = 6 * answerLimits('getHostappPaymentStatus').timeoutMs;

  constructor(
    private readonly platform: PlatformContext,
    options: ReconcilerOptions = {},
  ) {
    this.clock = options.clock ?? (() => new Date());
    this.random = options.random ?? Math.random;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new AbortController();
    this.loop = this.run();
  }

  /** Stops claiming, then waits for the asks in flight (each ends within the E4 time-out). */
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

  /** Resolves when every ask started so far has been recorded. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /**
   * One round: claims the payments due and starts asking about them, without waiting. With
   * `ifDue` (a poll that nothing woke), one read first asks whether any payment is due at all,
   * and the claim's locked transaction runs only when one is: an idle instance's poll is one
   * statement instead of four and takes no lock (ADR 0050, as the E6 worker's, ADR 0046).
   */
  async tick({ ifDue = false }: { ifDue?: boolean } = {}): Promise<ReconcileClaim[]> {
    const now = this.clock().getTime();
    const skipped = new Set<string>([
      ...[...this.backingOff].filter(([, state]) => state.until > now).map(([clientId]) => clientId),
      ...[...this.budgetSpent].filter(([, until]) => until > now).map(([clientId]) => clientId),
      ...[...this.askingPerHostapp].filter(([, asking]) => asking >= this.policy.maxInFlight).map(([clientId]) => clientId),
    ]);
    // Every registered host app paused here: no claim at all, rather than a statement that can
    // lease nothing after every finished ask (on PGlite's one session every request waits behind
    // each statement). A payment of a host app no longer registered waits for the next claim,
    // within a second or a back-off.
    const { hostapps } = this.platform.registry.all();
    if (hostapps.length > 0 && hostapps.every((hostapp) => skipped.has(hostapp.id))) return [];
    if (ifDue && !(await this.platform.store.reconciliation.anyDue())) return [];
    const claimed = await this.platform.store.reconciliation.claimDue({
      limit: this.platform.config.reconciler.batchSize,
      leaseMs: this.leaseMs,
      maxInFlightPerHostapp: this.policy.maxInFlight,
      skipHostapps: [...skipped],
    });
    for (const claim of claimed) this.track(claim);
    return claimed;
  }

  private async run(): Promise<void> {
    const { pollMs } = this.platform.config.reconciler;
    const { availability } = this.platform.store.db;
    // Whether the last wait ended with the poll interval rather than a wake-up.
    let polled = false;
    while (this.running) {
      if (!availability.up) {
        await availability.whenUp(this.stopping.signal).catch(() => undefined);
        continue;
      }
      let claimed = 0;
      try {
        claimed = (await this.tick({ ifDue: polled })).length;
      } catch (error) {
        if (!(error instanceof DatabaseUnavailableError))
          this.platform.log.error({ err: error }, 'reconciliation cycle failed; retrying after the poll interval');
      }
      // Anything claimed means more may be due: claim again at once; an empty claim waits for
      // the poll interval or a wake-up (an ask finished and freed its host app's slot).
      polled = claimed === 0 && this.running ? await this.idle(pollMs) : false;
    }
  }

  private track(claim: ReconcileClaim): void {
    this.askingPerHostapp.set(claim.client_id, (this.askingPerHostapp.get(claim.client_id) ?? 0) + 1);
    const asking: Promise<void> = this.ask(claim)
      .catch((error: unknown) => {
        // The lease runs out and the payment is asked about again: nothing is lost.
        this.platform.log.error(
          { err: error, order_payment_id: claim.order_payment_id, client_id: claim.client_id },
          'reconciliation ask could not be recorded; it is asked again when its lease ends',
        );
      })
      .finally(() => {
        this.inFlight.delete(asking);
        const left = (this.askingPerHostapp.get(claim.client_id) ?? 1) - 1;
        if (left > 0) this.askingPerHostapp.set(claim.client_id, left);
        else this.askingPerHostapp.delete(claim.client_id);
        // Its host app's slot is free: the next due payment may go.
        this.wake();
      });
    this.inFlight.add(asking);
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

  private async ask(claim: ReconcileClaim): Promise<void> {
    const { store, registry, metrics, log } = this.platform;
    const ref = { order_payment_id: claim.order_payment_id, app_id: claim.app_id, client_id: claim.client_id };
    const hostapp = registry.hostapp(claim.client_id);
    const budget = hostapp ? await this.platform.rateLimiters.reconciliation.take(claim.client_id) : undefined;
    if (budget && !budget.allowed) {
      // Over the host app's per-second budget: not asked, not counted; due again when the budget refills.
      const refill = this.clock().getTime() + budget.retryAfterSeconds * 1000;
      this.budgetSpent.set(claim.client_id, refill);
      const at = refill + budget.retryAfterSeconds * 1000 * this.random();
      await store.reconciliation.postpone(ref, claim.lease_id, new Date(at));
      metrics.reconcileAsks.inc({ outcome: 'postponed' });
      return;
    }
    const askedAt = this.clock();
    const { answer, durationMs } = hostapp
      ? await askHostappStatus(hostapp, ref, { hostappUserId: claim.hostapp_user_id ?? undefined }, this.platform)
      : {
          answer: {
            kind: 'failed' as const,
            failure: { kind: 'unreachable' as const, detail: `host app ${claim.client_id} is no longer registered` },
          },
          durationMs: 0,
        };
    this.noteHostapp(
      claim.client_id,
      answer.kind === 'failed' && answer.failure.kind !== 'invalid_body' && answer.failure.kind !== 'not_json',
    );

    let record: Omit<AskRecord, 'next_at' | 'stuck' | 'expires_at'>;
    let settled = false;
    const base = { ...ref, lease_id: claim.lease_id, asked_at: askedAt, duration_ms: durationMs };
    if (answer.kind === 'report' && answer.payment_status !== 'in_process') {
      const { payment_status, payment_fail_reason, custom_attributes } = answer;
      const result = await settle(this.platform, {
        ...ref,
        payment_status,
        payment_fail_reason,
        custom_attributes,
        source: 'reconciliation',
      });
      settled = result.outcome !== 'not_found';
      const outcome = result.outcome === 'applied' ? 'settled' : result.outcome === 'not_found' ? 'failed' : result.outcome;
      record = {
        ...base,
        outcome,
        payment_status,
        ...(result.outcome === 'not_found' && { detail: 'the payment is no longer on record' }),
      };
    } else if (answer.kind === 'report') {
      record = { ...base, outcome: 'in_process', payment_status: 'in_process' };
    } else if (answer.kind === 'refused' && answer.error_code === 'ORDER_NOT_FOUND') {
      record = { ...base, outcome: 'not_found', detail: 'the host app answered error_code ORDER_NOT_FOUND' };
    } else {
      const detail =
        answer.kind === 'refused'
          ? `the host app answered error_code ${answer.error_code}`
          : answer.kind === 'invalid'
            ? answer.message
            : answer.failure.detail;
      record = { ...base, outcome: 'failed', detail };
    }
    metrics.reconcileAsks.inc({ outcome: record.outcome });

    // Scheduled from when the ask was made, not when its answer came (ADR 0039): an ask made
    // before the at-expiry ask is not it, however late its answer; judged by the answer's time it
    // made the payment stuck and put off the at-expiry ask by the slow schedule's interval.
    const next = settled
      ? { at: null, stuck: false }
      : nextAsk(
          this.policy,
          {
            now: askedAt,
            asks: claim.asks,
            expiresAt: claim.expires_at,
            // An answer, even `in_process` or not found, is the host app's word; a failure is none.
            answered: record.outcome !== 'failed',
            stuck: claim.stuck_since !== null,
          },
          this.random,
        );
    const recorded = await store.reconciliation.recordAsk({ ...record, next_at: next.at, stuck: next.stuck, expires_at: claim.expires_at });
    const fields = {
      order_payment_id: ref.order_payment_id,
      client_id: ref.client_id,
      app_id: ref.app_id,
      ask: claim.asks,
      outcome: record.outcome,
    };
    if (!recorded) log.warn(fields, 'reconciliation ask not recorded: its lease passed to another instance');
    else if (settled) log.info(fields, 'reconciliation: the host app reported the outcome; recorded as an E5 would be');
    if (recorded && next.stuck && claim.stuck_since === null) {
      metrics.paymentsStuck.inc();
      log.warn(
        { ...fields, expires_at: claim.expires_at.toISOString(), next_ask_at: next.at?.toISOString() ?? null },
        'payment stuck: still in process after its expiry; asked again on the slow schedule, never decided by the platform',
      );
    }
  }

  /** A host app that fails to answer is left alone by this instance for a jittered, growing while. */
  private noteHostapp(clientId: string, failed: boolean): void {
    if (!failed) {
      this.backingOff.delete(clientId);
      return;
    }
    const now = this.clock().getTime();
    const state = this.backingOff.get(clientId);
    // Asks started before the pause fail together: they are one failure of the host app, not many.
    if (state && state.until > now) return;
    const failures = (state?.failures ?? 0) + 1;
    const { firstDelayMs, maxDelayMs } = this.policy.hostappBackoff;
    const pause = backoffDelay({ firstMs: firstDelayMs, capMs: maxDelayMs, random: this.random }, failures - 1);
    this.backingOff.set(clientId, { failures, until: now + pause });
  }
}
