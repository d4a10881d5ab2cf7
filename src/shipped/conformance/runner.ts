import { randomBytes } from 'node:crypto';
import { stringifyLossless } from '../../contract/json.js';
import { negativeCases, positiveCases, type RequestCase } from './cases.js';
import {
  acceptedVerdict,
  CHECKS,
  contentTypeVerdict,
  duplicateVerdict,
  errorCodeOf,
  hasJudgeableAnswer,
  orderIdempotencyVerdict,
  expiryVerdict,
  refusedVerdict,
  schemaVerdict,
  statusVerdict,
  type CheckName,
  type Verdict,
} from './checks.js';
import { send, Signer, type Exchange, type SentRequest } from './exchange.js';
import { replayWindowSeconds } from '../../wire/signing.js';
import { dotted, getAt, hasAt, withValueAt, type JsonPath } from '../../contract/jsonPath.js';
import { preflightStop, type Probe } from './preflight.js';
import { requestShape, type RequestShape } from './requestShape.js';
import { shrink } from './shrink.js';
import { targets, type OperationTarget, type Subject, type TargetSettings } from './targets.js';

export interface VerifyOptions extends TargetSettings {
  signingSecrets: string[];
  /** Run and report one check only. */
  only?: CheckName | undefined;
  /** Waiting time for one answer when the contract gives none (platform operations). */
  timeoutMs?: number | undefined;
}

export interface Failure {
  /** What was sent, e.g. "order.items[0].product_name at its limit, String(250)". */
  case: string;
  reason: string;
  request: SentRequest;
  status: number;
  response: string;
  /** Whether optional fields were dropped from the request while it kept failing. */
  shrunk: boolean;
}

export interface CheckResult {
  check: CheckName;
  operationId: string;
  operation: string;
  outcome: 'pass' | 'fail' | 'skip';
  /** How many requests the check judged. */
  requests: number;
  failures: Failure[];
  note?: string;
}

export interface VerifyReport {
  subject: Subject;
  url: string;
  results: CheckResult[];
  passed: boolean;
  /** Why the run stopped before checking anything: the target cannot be reached, or it refused every credential. */
  stopped?: string;
}

type Category = 'preflight' | 'positive' | 'negative' | 'auth' | 'stale-timestamp' | 'replay' | 'replayed' | 'idempotency' | 'expiry';

interface Sent {
  category: Category;
  label: string;
  exchange: Exchange;
  requestCase?: RequestCase;
}

/**
 * `bad-webhook-signature`: the deprecated X-Minibridge-* headers right, webhook-signature made with
 * another secret. `stale`: signed right, but timestamped outside the replay window.
 */
type AuthVariant = 'good' | 'missing' | 'wrong' | 'bad-signature' | 'bad-webhook-signature' | 'stale';

/** How far outside the replay window the stale-timestamp check's timestamp lies: clearly stale on any clock. */
const STALE_BEYOND_WINDOW_SECONDS = 120;

const PLATFORM_TIMEOUT_MS = 15_000;

/** Runs every check of the chosen API against a server and returns the verdicts. */
export async function verify(options: VerifyOptions): Promise<VerifyReport> {
  const run = new Run(options);
  const stopped = await run.preflight();
  if (stopped) return { subject: options.subject, url: options.url, results: [], passed: false, stopped };
  const results: CheckResult[] = [];
  for (const target of run.targets) results.push(...(await run.verifyOperation(target)));
  const reported = options.only ? results.filter((result) => result.check === options.only) : results;
  return { subject: options.subject, url: options.url, results: reported, passed: reported.every((result) => result.outcome !== 'fail') };
}

/** How long payments the kit creates live: long enough never to expire during a run, as on the platform (24 h). */
const ORDER_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** The expiry check's payment expires this soon after it is created... */
const EXPIRY_CHECK_LIFETIME_MS = 2_000;
/** ...and is asked about this long after it expired, so a host app's clock a little behind does not matter. */
const EXPIRY_CHECK_WAIT_MS = 1_000;

class Run {
  readonly targets: OperationTarget[];
  private readonly token = `c${randomBytes(4).toString('hex')}`;
  private counter = 0;
  private readonly signer?: Signer;
  private readonly orders = new Map<string, Promise<string>>();
  /** The expires_at the next order the kit creates carries, when the expiry check sets one. */
  private nextExpiry: string | undefined;
  /** The preflight's answers, judged with the operation's other answers by the checks on every answer. */
  private readonly preflightSent = new Map<string, Sent>();

  constructor(private readonly options: VerifyOptions) {
    this.signer = options.signingSecrets.length > 0 ? new Signer(options.signingSecrets) : undefined;
    this.targets = targets(options, {
      unique: (prefix) => this.unique(prefix),
      createOrder: (fresh) => this.createOrder(fresh),
      expiresAt: () => this.nextExpiry ?? new Date(Date.now() + ORDER_LIFETIME_MS).toISOString(),
    });
  }

  unique(prefix: string): string {
    return `${prefix}_${this.token}_${++this.counter}`;
  }

  /** Exactly `length` characters, lowercase letters and digits (valid as an identifier or an event type). */
  filler(length: number): string {
    return `${this.token}n${++this.counter}z${'x'.repeat(length)}`.slice(0, length);
  }

  private sends(category: Category): boolean {
    const only = this.options.only;
    return (
      !only ||
      !(['positive', 'negative', 'auth', 'stale-timestamp', 'replay', 'idempotency', 'expiry'] as string[]).includes(only) ||
      only === category
    );
  }

  /**
   * One request per operation before any check: whether the target answers at all, and whether
   * it refuses the credentials everywhere. Either stops the run with one message instead of a
   * table of checks that had nothing to judge.
   */
  async preflight(): Promise<string | undefined> {
    const probes: Probe[] = [];
    for (const target of this.targets) {
      const shape = requestShape(target.operationId);
      const smallest = [...shape.examples].sort((a, b) => stringifyLossless(a.value).length - stringifyLossless(b.value).length)[0];
      let exchange: Exchange;
      try {
        const value = smallest
          ? await this.bind(target, { kind: 'positive', label: 'preflight', base: smallest.value, apply: (base) => base }, 'positive')
          : undefined;
        exchange = await send(this.request(target, shape, value, 'good', this.unique('evt'), 1), this.sendOptions(target));
      } catch {
        // An operation that needs an order the subject did not create: the create operation's probe tells why.
        continue;
      }
      probes.push({ target, exchange, errorCode: errorCodeOf(exchange) });
      this.preflightSent.set(target.operationId, { category: 'preflight', label: 'preflight: the smallest documented example', exchange });
      // Unreachable: one message, not one per operation.
      if (exchange.status === 0) break;
    }
    return preflightStop(this.options, probes);
  }

  async verifyOperation(target: OperationTarget): Promise<CheckResult[]> {
    const shape = requestShape(target.operationId);
    const fixedPaths = target.bindings.filter((binding) => binding.fixed).map((binding) => binding.path);
    const caseOptions = { fixedPaths, filler: (length: number) => this.filler(length) };
    const preflight = this.preflightSent.get(target.operationId);
    const sent: Sent[] = preflight ? [preflight] : [];
    const unprepared: Array<{ category: Category; label: string; reason: string }> = [];
    const attempt = async (category: Category, requestCase: RequestCase, variant: AuthVariant = 'good') => {
      try {
        const exchange = await this.exchange(target, shape, requestCase, variant);
        sent.push({ category, label: requestCase.label, exchange, requestCase });
      } catch (error) {
        unprepared.push({ category, label: requestCase.label, reason: `could not prepare the request: ${(error as Error).message}` });
      }
    };

    const positives = positiveCases(shape, caseOptions);
    if (this.sends('positive')) for (const requestCase of positives) await attempt('positive', requestCase);
    if (this.sends('negative')) for (const requestCase of negativeCases(shape, caseOptions)) await attempt('negative', requestCase);
    const example = positives[0]!;
    if (this.sends('auth') && target.authorization) {
      const probes: Array<[AuthVariant, string]> = [['wrong', 'wrong Authorization (right id, wrong secret)']];
      if (target.probeMissingAuthorization) probes.unshift(['missing', 'no Authorization']);
      if (this.signer) {
        probes.push(['bad-signature', 'every signature header made with another secret']);
        probes.push(['bad-webhook-signature', 'webhook-signature made with another secret, the deprecated X-Minibridge-Signature right']);
      }
      for (const [variant, label] of probes) await attempt('auth', { ...example, label }, variant);
    }
    // With signing on, a receiver refuses what an eavesdropper could send again (ADR 0004, ADR 0038):
    // a request timestamped outside the window, and a request it already accepted, byte for byte.
    const signed = this.signer !== undefined && shape.carrier !== 'none';
    if (signed && this.sends('stale-timestamp'))
      await attempt(
        'stale-timestamp',
        {
          ...example,
          label: `signed right, timestamped ${replayWindowSeconds() + STALE_BEYOND_WINDOW_SECONDS} s ago (the window is ${replayWindowSeconds()} s)`,
        },
        'stale',
      );
    const replays: Array<{ original: Exchange; again: Exchange }> = [];
    if (signed && this.sends('replay')) {
      try {
        const value = await this.bind(target, example, 'positive');
        const request = this.request(target, shape, value, 'good', this.unique('evt'), 1);
        const original = await send(request, this.sendOptions(target));
        const again = await send(request, this.sendOptions(target));
        replays.push({ original, again });
        sent.push(
          { category: 'replayed', label: 'a signed request, sent once', exchange: original },
          { category: 'replay', label: 'the same signed request sent again, byte for byte', exchange: again },
        );
      } catch (error) {
        unprepared.push({
          category: 'replay',
          label: 'a replayed request',
          reason: `could not prepare the request: ${(error as Error).message}`,
        });
      }
    }
    const duplicates: Array<{ first: Exchange; second: Exchange }> = [];
    if (this.sends('idempotency') && target.duplicateDelivery) {
      try {
        const value = await this.bind(target, example, 'positive');
        const eventId = this.unique('evt');
        const first = await send(this.request(target, shape, value, 'good', eventId, 1), this.sendOptions(target));
        const second = await send(this.request(target, shape, value, 'good', eventId, 2), this.sendOptions(target));
        duplicates.push({ first, second });
        sent.push(
          { category: 'idempotency', label: 'first delivery', exchange: first },
          { category: 'idempotency', label: 'second delivery', exchange: second },
        );
      } catch (error) {
        unprepared.push({
          category: 'idempotency',
          label: 'duplicate delivery',
          reason: `could not prepare the request: ${(error as Error).message}`,
        });
      }
    }
    const orderRepeats: Array<{ first: Exchange; repeat: Exchange; other: Exchange }> = [];
    if (this.sends('idempotency') && target.idempotentOn) {
      const key = target.idempotentOn;
      try {
        const value = withValueAt(await this.bind(target, example, 'positive'), key, this.unique('ORD'));
        const other = withValueAt(value, key, this.unique('ORD'));
        const options = this.sendOptions(target);
        const first = await send(this.request(target, shape, value, 'good', this.unique('evt'), 1), options);
        const repeat = await send(this.request(target, shape, value, 'good', this.unique('evt'), 1), options);
        const another = await send(this.request(target, shape, other, 'good', this.unique('evt'), 1), options);
        orderRepeats.push({ first, repeat, other: another });
        sent.push(
          { category: 'idempotency', label: `first order (${dotted(key)})`, exchange: first },
          { category: 'idempotency', label: `the same ${dotted(key)} again`, exchange: repeat },
          { category: 'idempotency', label: `another ${dotted(key)}`, exchange: another },
        );
      } catch (error) {
        unprepared.push({
          category: 'idempotency',
          label: 'the same order twice',
          reason: `could not prepare the request: ${(error as Error).message}`,
        });
      }
    }

    const expired: Exchange[] = [];
    if (this.sends('expiry') && target.expiry) {
      try {
        // A payment that expires at once (E3 tells the host app when), left unpaid; asked about once expired.
        const expiresAt = Date.now() + EXPIRY_CHECK_LIFETIME_MS;
        this.nextExpiry = new Date(expiresAt).toISOString();
        let id: string;
        try {
          id = await this.placeOrder();
        } finally {
          this.nextExpiry = undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt + EXPIRY_CHECK_WAIT_MS - Date.now())));
        const value = withValueAt(await this.bind(target, example, 'positive'), ['order_payment_id'], id);
        const exchange = await send(this.request(target, shape, value, 'good', this.unique('evt'), 1), this.sendOptions(target));
        expired.push(exchange);
        sent.push({ category: 'expiry', label: 'a payment past its expires_at, never paid', exchange });
      } catch (error) {
        unprepared.push({
          category: 'expiry',
          label: 'an expired payment',
          reason: `could not prepare the request: ${(error as Error).message}`,
        });
      }
    }

    const contract = shape.operation;
    /** `applies`: whether an exchange has anything for the check to judge; those without are not counted, so a check with no answer to judge is never a pass. */
    const judge = async (
      check: CheckName,
      all: Sent[],
      verdict: (exchange: Exchange) => Verdict,
      shrinkable = false,
      applies = (_exchange: Exchange) => true,
    ): Promise<CheckResult> => {
      const judged = all.filter((item) => applies(item.exchange));
      const failures: Failure[] = [];
      for (const item of judged) {
        const reason = verdict(item.exchange);
        if (reason) failures.push(failure(item.label, reason, item.exchange));
      }
      const first = judged.find((item) => verdict(item.exchange));
      if (shrinkable && first?.requestCase) failures[0] = await this.shrunkFailure(target, shape, first, verdict, failures[0]!);
      const checked = result(check, target, judged.length, failures);
      if (judged.length === 0 && all.length > 0) addNote(checked, 'no answer to check');
      return withUnprepared(
        checked,
        unprepared.filter((entry) => entry.category === check),
      );
    };
    const of = (category: Category) => sent.filter((item) => item.category === category);

    const results: CheckResult[] = [
      await judge('status', sent, (exchange) => statusVerdict(exchange, contract, target.rules)),
      await judge(
        'content-type',
        sent,
        (exchange) => contentTypeVerdict(exchange, contract),
        false,
        (exchange) => exchange.status !== 0,
      ),
      await judge(
        'schema',
        sent,
        (exchange) => schemaVerdict(exchange, contract),
        false,
        (exchange) => hasJudgeableAnswer(exchange, contract),
      ),
      await judge('positive', of('positive'), (exchange) => acceptedVerdict(exchange, target.rules), true),
      await judge('negative', of('negative'), (exchange) => refusedVerdict(exchange, target.rules), true),
      await judge('auth', of('auth'), (exchange) => refusedVerdict(exchange, target.rules)),
      await judge('stale-timestamp', of('stale-timestamp'), (exchange) => refusedVerdict(exchange, target.rules)),
    ];
    const replay = result('replay', target, 0, []);
    for (const { original, again } of replays) {
      // Only a copy of a request that was accepted says anything about replays.
      const refusedFirst = acceptedVerdict(original, target.rules);
      if (refusedFirst) {
        addNote(replay, `the request to replay was not accepted (${refusedFirst})`);
        continue;
      }
      replay.requests += 1;
      const reason = refusedVerdict(again, target.rules);
      if (reason) replay.failures.push(failure('the same signed request sent again, byte for byte', `the replay was ${reason}`, again));
    }
    replay.outcome = replay.failures.length > 0 ? 'fail' : replay.requests > 0 ? 'pass' : 'skip';
    results.push(
      withUnprepared(
        replay,
        unprepared.filter((entry) => entry.category === 'replay'),
      ),
    );
    for (const check of ['stale-timestamp', 'replay'] as const) {
      const entry = results.find((found) => found.check === check)!;
      if (!signed && entry.outcome === 'skip') addNote(entry, 'requests are not signed (no --signing-secret)');
    }
    const idempotency = result('idempotency', target, duplicates.length * 2, []);
    for (const { first, second } of duplicates) {
      const reason = duplicateVerdict(first, second, target.rules);
      if (reason) idempotency.failures.push(failure('the same event delivered twice', reason, second));
    }
    for (const { first, repeat, other } of orderRepeats) {
      const reason = orderIdempotencyVerdict(first, repeat, other, target.rules);
      if (reason === null) {
        addNote(idempotency, 'no order_payment_id to compare');
        continue;
      }
      idempotency.requests += 3;
      if (reason) idempotency.failures.push(failure(`the same ${dotted(target.idempotentOn!)} twice, then another`, reason, repeat));
    }
    idempotency.outcome = idempotency.failures.length > 0 ? 'fail' : idempotency.requests > 0 ? 'pass' : 'skip';
    if (!target.duplicateDelivery && !target.idempotentOn) idempotency.note = 'not an event receiver';
    results.push(
      withUnprepared(
        idempotency,
        unprepared.filter((entry) => entry.category === 'idempotency'),
      ),
    );
    const expiry = result('expiry', target, expired.length, []);
    for (const exchange of expired) {
      const reason = expiryVerdict(exchange, target.rules);
      if (reason) expiry.failures.push(failure('a payment past its expires_at, never paid', reason, exchange));
    }
    expiry.outcome = expiry.failures.length > 0 ? 'fail' : expiry.requests > 0 ? 'pass' : 'skip';
    if (!target.expiry) expiry.note = 'not a status query';
    results.push(
      withUnprepared(
        expiry,
        unprepared.filter((entry) => entry.category === 'expiry'),
      ),
    );
    const auth = results.find((entry) => entry.check === 'auth')!;
    if (!target.authorization) addNote(auth, 'the operation is open');
    else if (!target.probeMissingAuthorization && auth.outcome !== 'skip')
      addNote(auth, 'no probe without Authorization: an allow-listed address may stand in for credentials');
    return results.sort((a, b) => CHECKS.indexOf(a.check) - CHECKS.indexOf(b.check));
  }

  /** Drops optional members of a failing case's base one by one while the case keeps failing. */
  private async shrunkFailure(
    target: OperationTarget,
    shape: RequestShape,
    item: Sent,
    verdict: (exchange: Exchange) => Verdict,
    original: Failure,
  ): Promise<Failure> {
    const requestCase = item.requestCase!;
    let last = item.exchange;
    let lastReason = original.reason;
    const smallest = await shrink(requestCase, shape, async (base) => {
      const exchange = await this.exchange(target, shape, { ...requestCase, base }, 'good');
      const reason = verdict(exchange);
      if (reason) {
        last = exchange;
        lastReason = reason;
      }
      return reason !== undefined;
    });
    if (smallest === requestCase.base) return original;
    return { ...failure(requestCase.label, lastReason, last), shrunk: true };
  }

  private async exchange(target: OperationTarget, shape: RequestShape, requestCase: RequestCase, variant: AuthVariant): Promise<Exchange> {
    const value = await this.bind(target, requestCase, requestCase.kind === 'positive' && variant === 'good' ? 'positive' : 'other');
    return send(this.request(target, shape, value, variant, this.unique('evt'), 1), this.sendOptions(target));
  }

  /** The case's body with the run's values at the bound paths (never at the path the case is about). */
  private async bind(target: OperationTarget, requestCase: RequestCase, purpose: 'positive' | 'other'): Promise<unknown> {
    let value = requestCase.apply(requestCase.base);
    const focus = requestCase.focus;
    for (const binding of target.bindings) {
      if (!hasAt(value, binding.path) || (focus && isWithin(binding.path, focus))) continue;
      value = withValueAt(value, binding.path, await binding.value(purpose));
    }
    return value;
  }

  private request(
    target: OperationTarget,
    shape: RequestShape,
    value: unknown,
    variant: AuthVariant,
    eventId: string,
    attempt: number,
  ): SentRequest {
    const headers: Record<string, string> = { Accept: 'application/json', ...target.headers(value, eventId) };
    if (headers['X-Minibridge-Delivery-Attempt']) headers['X-Minibridge-Delivery-Attempt'] = String(attempt);
    const authorization = variant === 'wrong' ? target.wrongAuthorization : variant === 'missing' ? undefined : target.authorization;
    if (authorization) headers.Authorization = authorization;
    let url = target.url;
    let body: string | undefined;
    let signed = '';
    if (shape.carrier === 'body') {
      body = stringifyLossless(value);
      signed = body;
      headers['Content-Type'] = 'application/json';
    } else if (shape.carrier === 'query') {
      signed = new URLSearchParams(
        Object.entries(value as Record<string, unknown>).map(([key, item]): [string, string] => [
          key,
          typeof item === 'string' ? item : stringifyLossless(item),
        ]),
      ).toString();
      url = `${url}?${signed}`;
    }
    if (this.signer && shape.carrier !== 'none') {
      // webhook-id: the event id where the operation carries one, as Minibridge signs E6 and E7.
      const messageId = headers['X-Minibridge-Event-Id'];
      const otherSecret = [`not-${this.token}-secret`];
      if (variant === 'bad-signature') Object.assign(headers, this.signer.sign(signed, { secrets: otherSecret, messageId }));
      else if (variant === 'stale')
        Object.assign(headers, this.signer.sign(signed, { messageId, secondsAgo: replayWindowSeconds() + STALE_BEYOND_WINDOW_SECONDS }));
      else if (variant === 'bad-webhook-signature') {
        const wrong = this.signer.sign(signed, { secrets: otherSecret, messageId });
        Object.assign(headers, this.signer.sign(signed, { messageId }), {
          'webhook-signature': wrong['webhook-signature']!,
          'webhook-id': wrong['webhook-id']!,
          'webhook-timestamp': wrong['webhook-timestamp']!,
        });
      } else Object.assign(headers, this.signer.sign(signed, { messageId }));
    }
    return { method: shape.operation.method, url, headers, body };
  }

  private sendOptions(target: OperationTarget) {
    const contract = requestShape(target.operationId).operation;
    return { timeoutMs: contract.timeoutMs ?? this.options.timeoutMs ?? PLATFORM_TIMEOUT_MS };
  }

  /** An order payment created through the subject's create operation (E3 for a host app, E1 for the platform). */
  private createOrder(fresh: boolean): Promise<string> {
    const key = fresh ? this.unique('order') : 'shared';
    let order = this.orders.get(key);
    if (!order) {
      order = this.placeOrder();
      if (!fresh) this.orders.set(key, order);
    }
    return order;
  }

  /** Creates an order payment through the subject's create operation (its E3 carries `nextExpiry` when set). */
  private async placeOrder(): Promise<string> {
    const creator = this.targets.find(
      (target) => target.operationId === 'createHostappOrderPayment' || target.operationId === 'createOrderPayment',
    );
    if (!creator) throw new Error('no create operation to make an order payment with');
    const shape = requestShape(creator.operationId);
    const smallest = [...shape.examples].sort((a, b) => stringifyLossless(a.value).length - stringifyLossless(b.value).length)[0]!;
    const value = await this.bind(creator, { kind: 'positive', label: 'setup', base: smallest.value, apply: (base) => base }, 'positive');
    const exchange = await send(this.request(creator, shape, value, 'good', this.unique('evt'), 1), this.sendOptions(creator));
    const id = getAt(exchange.json, ['order_payment_id']);
    if (typeof id !== 'string')
      throw new Error(`${creator.name} did not create an order payment (HTTP ${exchange.status}: ${exchange.text.slice(0, 200)})`);
    return id;
  }
}

/**
 * Requests that could not be made (an order payment the subject's create operation did not give)
 * are not verdicts on this operation: the create operation's own checks report that failure.
 */
function withUnprepared(checked: CheckResult, unprepared: Array<{ label: string; reason: string }>): CheckResult {
  if (unprepared.length === 0) return checked;
  addNote(checked, `${unprepared.length} request(s) not made: ${unprepared[0]!.reason}`);
  return checked;
}

function addNote(checked: CheckResult, note: string): void {
  checked.note = checked.note ? `${checked.note}; ${note}` : note;
}

function isWithin(path: JsonPath, ancestor: JsonPath): boolean {
  return (
    dotted(path) === dotted(ancestor) || dotted(path).startsWith(`${dotted(ancestor)}.`) || dotted(path).startsWith(`${dotted(ancestor)}[`)
  );
}

function failure(label: string, reason: string, exchange: Exchange): Failure {
  return { case: label, reason, request: exchange.request, status: exchange.status, response: exchange.text, shrunk: false };
}

function result(check: CheckName, target: OperationTarget, requests: number, failures: Failure[]): CheckResult {
  return {
    check,
    operationId: target.operationId,
    operation: target.name,
    outcome: failures.length > 0 ? 'fail' : requests > 0 ? 'pass' : 'skip',
    requests,
    failures,
  };
}
