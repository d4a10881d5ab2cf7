import { parse } from 'lossless-json';
import {
  BRIDGE_ERROR_CODES,
  BRIDGE_PROTOCOL,
  BRIDGE_PROTOCOL_VERSION,
  CUSTOM_EVENT_NAME,
  MESSAGE_ID_MAX_LENGTH,
} from '../../../generated/sdk/bridge-contract.js';
import { REPORT_LIMITS, WAITING_EVENT_TYPE } from '../../../generated/sdk/bridge-conformance-contract.js';
import {
  answerMismatch,
  customEventFindings,
  describe,
  jsonDifference,
  payFindings,
  type Finding,
  type NumberComparison,
} from './judge.js';
import {
  actionOf,
  answersOf,
  HOST_EVENT_RULE,
  PAY_RULES,
  readableId,
  toText,
  toValue,
  valueTransportGap,
  type ExpectedAnswer,
  type Report,
  type ReportCheck,
  type Vector,
  type Vectors,
  type Waiting,
} from './vectors.js';

/**
 * The conformance page's runner: drives a live host bridge through every vector its transport
 * can carry, the way a miniapp would, and judges what comes back (ADR 0040). The page wires it to
 * the window (page.ts); the tests wire it to the project's web host over fake windows.
 *
 * Steps the host app or a person must do (finish a payment sheet, send an event, answer a custom
 * event) become prompts: a custom event the host's UI test can act on, and words on the page. A
 * person is waited for at most `userWaitMs`, an answer that needs no one at most `answerWaitMs`.
 * Between vectors a request every host refuses at once (a `pay` without `paymentData`) is sent and
 * its answer awaited, so a wrong answer arrives before the next vector starts and is charged to
 * the vector that caused it. Every answer that arrives before the run ends is judged.
 */
export interface ConformanceWire {
  transport: 'iframe' | 'webkit' | 'android';
  /** `text`: the host receives JSON text (native web views); `value`: JavaScript values (postMessage to a frame). */
  carries: 'text' | 'value';
  /** Sends JSON text (text transports) or a value (value transports) to the host. */
  send(data: unknown): void;
  /** Calls receive with what the host posts to the page; returns a function that stops listening. */
  listen(receive: (data: unknown) => void): () => void;
}

export interface ConformanceOptions {
  vectors: Vectors;
  wire: ConformanceWire;
  run: string;
  /** How long the page waits for a person (a payment sheet, an event to send). */
  userWaitMs: number;
  /** How long the page waits for an answer that needs no one (a custom event's result, a refusal). */
  answerWaitMs: number;
  /** The JS SDK's subscribe: the page checks that host events reach it. */
  subscribe(callback: (detail: unknown) => void): () => void;
  /** Called with the report whenever it changes (at the start, on every prompt, at the end). */
  onUpdate?(report: Report): void;
  /** Called with what the page waits for, and with undefined when it no longer waits. */
  onWaiting?(waiting: Waiting | undefined): void;
  userAgent?: string | undefined;
  now?(): Date;
}

/** A message the host app posted, as received. */
interface Received {
  value: Record<string, unknown>;
  /** Posted as JSON text (exact numbers) rather than as a JavaScript value. */
  asText: boolean;
  text: string;
}

interface Expectation {
  answer: ExpectedAnswer;
  /** Follows a step of the host app or a person: the members it chooses are judged by the schema only. */
  hostSide: boolean;
}

interface SentRequest {
  vector: string;
  rule: string;
  id: string;
  sent: string;
  expected: Expectation[];
  /** Set when the page stopped waiting for this request's answer. */
  waitedMs?: number;
}

interface HostEventStep {
  vector: string;
  rule: string;
  expected: ExpectedAnswer[];
  /** Host events received before the prompt (not this step's). */
  from: number;
  waitedMs?: number;
}

interface Stray {
  vector: string;
  rule: string;
  received: Received;
}

const BARRIER_VECTOR = 'page-barrier';
const WAITING_VECTOR = 'page-waiting';

export async function runConformance(options: ConformanceOptions): Promise<Report> {
  return new ConformanceRun(options).execute();
}

class ConformanceRun {
  private readonly requests = new Map<string, SentRequest>();
  private readonly answers = new Map<string, Received[]>();
  private readonly hostEvents: Received[] = [];
  private readonly hostEventSteps: HostEventStep[] = [];
  private readonly delivered: unknown[] = [];
  private readonly strays: Stray[] = [];
  private readonly skipped = new Map<string, string>();
  /** The vectors run, by their rule: each judged at least by what it was answered, or by silence. */
  private readonly ran = new Map<string, Set<string>>();
  private readonly answersAs = new Set<'text' | 'object'>();
  private readonly waiters = new Set<() => void>();
  private readonly startedAt: string;
  private current: { vector: string; rule: string } | undefined;
  private counter = 0;
  private barrierNote: string | undefined;
  private waitingFor: string | undefined;

  constructor(private readonly options: ConformanceOptions) {
    this.startedAt = this.now();
  }

  async execute(): Promise<Report> {
    const { wire, vectors } = this.options;
    const stopListening = wire.listen((data) => this.receive(data));
    const unsubscribe = this.options.subscribe((detail) => {
      this.delivered.push(detail);
      this.notify();
    });
    try {
      this.update(this.report(false));
      for (const vector of vectors.vectors) {
        const gap = wire.carries === 'value' ? valueTransportGap(vector) : undefined;
        if (gap) this.skipped.set(vector.id, gap);
        else await this.runVector(vector);
      }
      this.current = undefined;
      await this.barrier();
    } finally {
      stopListening();
      unsubscribe();
      this.wait(undefined);
    }
    const report = this.report(true);
    this.update(report);
    return report;
  }

  private receive(data: unknown): void {
    let value: unknown;
    const asText = typeof data === 'string';
    if (asText) {
      try {
        value = parse(data);
      } catch {
        return; // not JSON: not bridge traffic
      }
    } else {
      value = data;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
    const message = value as Record<string, unknown>;
    if (message.protocol !== BRIDGE_PROTOCOL) return; // other traffic on the same window
    this.answersAs.add(asText ? 'text' : 'object');
    const received: Received = { value: message, asText, text: asText ? (data as string) : safeText(message) };
    const replyTo = message.replyTo;
    if (typeof replyTo === 'string' && this.requests.has(replyTo)) {
      const list = this.answers.get(replyTo) ?? [];
      list.push(received);
      this.answers.set(replyTo, list);
    } else if (message.type === 'host_event' && replyTo === undefined) {
      this.hostEvents.push(received);
    } else {
      this.strays.push({ vector: this.current?.vector ?? BARRIER_VECTOR, rule: this.current?.rule ?? 'unknown-type-ignored', received });
    }
    this.notify();
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }

  /** Resolves true as soon as done() holds, false after ms. */
  private waitFor(done: () => boolean, ms: number): Promise<boolean> {
    if (done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (value: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(value);
      };
      const check = () => {
        if (done()) finish(true);
      };
      const timer = setTimeout(() => finish(false), ms);
      this.waiters.add(check);
    });
  }

  private async runVector(vector: Vector): Promise<void> {
    this.current = { vector: vector.id, rule: vector.rule };
    // The pay rules are judged on pay_results only (payFindings says which it could judge).
    if (!(Object.values(PAY_RULES) as string[]).includes(vector.rule))
      this.ran.set(vector.rule, (this.ran.get(vector.rule) ?? new Set()).add(vector.id));
    let askedForAnswers = false;
    for (const step of vector.steps) {
      const action = actionOf(step);
      if (action.kind === 'send' || action.kind === 'sendText') {
        const value = action.kind === 'send' ? action.value : action.text;
        const text = action.kind === 'send' ? toText(action.value) : action.text;
        const id = action.kind === 'send' ? readableId(action.value, MESSAGE_ID_MAX_LENGTH) : undefined;
        if (id !== undefined)
          this.track({ vector: vector.id, rule: vector.rule, id, sent: text, expected: expectations(answersOf(step), false) });
        this.send(value, text, action.kind === 'sendText');
        askedForAnswers = false;
        continue;
      }
      await this.barrier();
      if (action.kind === 'sendHostEvent') {
        const hostStep: HostEventStep = { vector: vector.id, rule: vector.rule, expected: answersOf(step), from: this.hostEvents.length };
        this.hostEventSteps.push(hostStep);
        this.prompt({ for: 'send-host-event', message: 'Send an event to this page from the host app now.' });
        const arrived = await this.waitFor(() => this.hostEventSeen(hostStep), this.options.userWaitMs);
        if (!arrived) hostStep.waitedMs = this.options.userWaitMs;
        this.wait(undefined);
        continue;
      }
      const request = this.requests.get(action.request);
      if (!request) throw new Error(`vector ${vector.id}: step names ${action.request}, which no earlier step sent`);
      request.expected.push(...expectations(answersOf(step), true));
      if (action.kind === 'finishPayment') {
        const orderPaymentId = paymentOf(request);
        this.prompt({
          for: 'finish-payment',
          ...(orderPaymentId !== undefined && { orderPaymentId }),
          status: action.status,
          message: `Finish the payment sheet${orderPaymentId ? ` for ${orderPaymentId}` : ''} now: press ${BUTTON_FOR[action.status] ?? 'any button'}.`,
        });
        await this.awaitAnswers(request, this.options.userWaitMs);
        this.wait(undefined);
      } else {
        if (!askedForAnswers) {
          this.prompt({ for: 'answer-custom-events', message: 'Waiting for the host app to answer custom events.' });
          askedForAnswers = true;
        }
        await this.awaitAnswers(request, this.options.answerWaitMs);
      }
    }
    await this.barrier();
  }

  private async awaitAnswers(request: SentRequest, ms: number): Promise<void> {
    const arrived = await this.waitFor(() => (this.answers.get(request.id)?.length ?? 0) >= request.expected.length, ms);
    if (!arrived) request.waitedMs = ms;
  }

  private hostEventSeen(step: HostEventStep): boolean {
    const event = this.hostEvents[step.from];
    if (!event) return false;
    return this.delivered.some((detail) => jsonDifference(event.value.detail, detail, 'double') === undefined);
  }

  private track(request: SentRequest): void {
    this.requests.set(request.id, request);
  }

  private send(value: unknown, text: string, isText: boolean): void {
    const { wire } = this.options;
    // A text step is raw text on every transport; a value step is its exact JSON text where text is carried.
    wire.send(wire.carries === 'text' ? text : isText ? value : toValue(value));
  }

  /** A request every host refuses at once; once it is answered, what the vector caused has arrived. */
  private async barrier(): Promise<void> {
    if (this.barrierNote) return;
    const id = this.nextId('b');
    const message = { protocol: BRIDGE_PROTOCOL, version: BRIDGE_PROTOCOL_VERSION, id, type: 'pay' };
    this.track({
      vector: BARRIER_VECTOR,
      rule: 'invalid-message',
      id,
      sent: toText(message),
      expected: expectations(
        [{ type: 'error', replyTo: id, error: { code: BRIDGE_ERROR_CODES.INVALID_MESSAGE } } as ExpectedAnswer],
        false,
      ),
    });
    this.send(message, toText(message), false);
    if (!(await this.waitFor(() => this.answers.has(id), this.options.answerWaitMs))) {
      this.barrierNote = `the host did not refuse a pay without paymentData within ${seconds(this.options.answerWaitMs)}; later answers were not awaited between vectors`;
    }
  }

  /** Says what the page waits for: to the host app (a custom event it may act on) and on the page. */
  private prompt(waiting: Waiting): void {
    const id = this.nextId('w');
    const message = {
      protocol: BRIDGE_PROTOCOL,
      version: BRIDGE_PROTOCOL_VERSION,
      id,
      type: 'custom_event',
      eventName: CUSTOM_EVENT_NAME,
      data: { type: WAITING_EVENT_TYPE, payload: waiting },
      expectsReply: false,
    };
    this.track({ vector: WAITING_VECTOR, rule: 'custom-event-no-reply', id, sent: toText(message), expected: [] });
    this.send(message, toText(message), false);
    this.wait(waiting);
  }

  private wait(waiting: Waiting | undefined): void {
    const text = waiting?.message;
    if (text === this.waitingFor) return;
    this.waitingFor = text;
    this.options.onWaiting?.(waiting);
    if (waiting && waiting.for !== 'answer-custom-events') this.update(this.report(false));
  }

  private update(report: Report): void {
    this.options.onUpdate?.(report);
  }

  private nextId(kind: string): string {
    this.counter += 1;
    return `page-${kind}-${this.options.run}-${this.counter}`.slice(0, MESSAGE_ID_MAX_LENGTH);
  }

  private now(): string {
    return (this.options.now?.() ?? new Date()).toISOString();
  }

  /** The findings and the vectors each rule judged. */
  private judge(): { findings: Array<Finding & { vector: string; sent?: string; received?: string }>; judged: Map<string, Set<string>> } {
    const findings: Array<Finding & { vector: string; sent?: string; received?: string }> = [];
    const judged = new Map<string, Set<string>>([...this.ran].map(([rule, ids]) => [rule, new Set(ids)]));
    const judgedBy = (rule: string, vector: string) => {
      if (vector.startsWith('page-')) return;
      judged.set(rule, (judged.get(rule) ?? new Set()).add(vector));
    };
    for (const request of this.requests.values()) {
      const answers = this.answers.get(request.id) ?? [];
      const received = answers.length > 0 ? answers.map((answer) => answer.text).join('\n') : undefined;
      const base = { vector: request.vector, sent: request.sent, ...(received !== undefined && { received }) };
      const pay = request.expected.length === 1 && request.expected[0]!.answer.type === 'pay_result' ? request.expected[0]! : undefined;
      if (pay) {
        const result = payFindings(
          pay.answer,
          answers.map((answer) => answer.value),
          this.judgeOptions(answers[0], true),
        );
        for (const rule of result.judged) judgedBy(rule, request.vector);
        for (const finding of result.findings)
          findings.push({ ...finding, ...base, reason: this.withWait(finding.reason, request, answers) });
        continue;
      }
      const customEvent =
        request.expected.length === 1 && request.expected[0]!.answer.type === 'custom_event_result' ? request.expected[0]! : undefined;
      if (customEvent) {
        const options = this.judgeOptions(answers[0], customEvent.hostSide);
        const result = customEventFindings(
          customEvent.answer,
          answers.map((answer) => answer.value),
          request.rule,
          options,
        );
        for (const rule of result.judged) judgedBy(rule, request.vector);
        for (const finding of result.findings)
          findings.push({ ...finding, ...base, reason: this.withWait(finding.reason, request, answers) });
        continue;
      }
      judgedBy(request.rule, request.vector);
      const reasons: string[] = [];
      request.expected.forEach((expectation, index) => {
        const answer = answers[index];
        if (!answer) reasons.push(this.withWait(`no ${describeAnswer(expectation.answer)}`, request, answers));
        else {
          const mismatch = answerMismatch(expectation.answer, answer.value, this.judgeOptions(answer, expectation.hostSide));
          if (mismatch) reasons.push(mismatch);
        }
      });
      if (answers.length > request.expected.length) {
        const extra = answers.slice(request.expected.length).map((answer) => describeReceived(answer.value));
        reasons.push(
          request.expected.length === 0
            ? `answered (${extra.join(', ')}) where nothing should be answered`
            : `answered again (${extra.join(', ')})`,
        );
      }
      for (const reason of reasons) findings.push({ rule: request.rule, reason, ...base });
    }
    for (const stray of this.strays) {
      findings.push({
        rule: stray.rule,
        vector: stray.vector,
        reason: `posted ${describeReceived(stray.received.value)}, which answers no request the page sent`,
        received: stray.received.text,
      });
    }
    for (const step of this.hostEventSteps) {
      judgedBy(step.rule, step.vector);
      const event = this.hostEvents[step.from];
      if (!event) {
        findings.push({
          rule: step.rule,
          vector: step.vector,
          reason: `no host_event arrived${step.waitedMs ? ` within ${seconds(step.waitedMs)}` : ''}`,
        });
        continue;
      }
      const mismatch = step.expected[0] ? answerMismatch(step.expected[0], event.value, this.judgeOptions(event, true)) : undefined;
      if (mismatch) findings.push({ rule: step.rule, vector: step.vector, reason: mismatch, received: event.text });
      else if (!this.hostEventSeen(step))
        findings.push({
          rule: HOST_EVENT_RULE,
          vector: step.vector,
          reason: 'the host_event did not reach the JS SDK subscribe callback',
          received: event.text,
        });
    }
    return { findings, judged };
  }

  private judgeOptions(answer: Received | undefined, relaxHostChosen: boolean) {
    const numbers: NumberComparison = !answer || answer.asText || this.options.wire.carries === 'value' ? 'text' : 'double';
    return { vectors: this.options.vectors, relaxHostChosen, numbers };
  }

  private withWait(reason: string, request: SentRequest, answers: readonly Received[]): string {
    return answers.length === 0 && request.waitedMs !== undefined ? `${reason} within ${seconds(request.waitedMs)}` : reason;
  }

  private report(finished: boolean): Report {
    const { vectors, wire } = this.options;
    const judgment = finished ? this.judge() : undefined;
    const checks: ReportCheck[] = vectors.rules.map((rule) => {
      if (!judgment) return { rule: rule.id, outcome: 'pending', vectors: 0, failures: [] };
      const failures = judgment.findings.filter((finding) => finding.rule === rule.id);
      const count = judgment.judged.get(rule.id)?.size ?? 0;
      const check: ReportCheck = {
        rule: rule.id,
        outcome: failures.length > 0 ? 'fail' : count > 0 ? 'pass' : 'skip',
        vectors: count,
        failures: failures.slice(0, REPORT_LIMITS.failuresPerCheck).map((finding) => ({
          vector: finding.vector,
          reason: clip(finding.reason, REPORT_LIMITS.reason),
          ...(finding.sent !== undefined && { sent: clip(finding.sent, REPORT_LIMITS.sent) }),
          ...(finding.received !== undefined && { received: clip(finding.received, REPORT_LIMITS.received) }),
        })),
      };
      const note = this.noteFor(rule.id, check);
      if (note) check.note = note;
      return check;
    });
    const answersAs = this.answersAs.size === 0 ? 'none' : this.answersAs.size === 2 ? 'mixed' : [...this.answersAs][0]!;
    return {
      run: this.options.run,
      finished,
      passed: finished && checks.every((check) => check.outcome !== 'fail'),
      startedAt: this.startedAt,
      updatedAt: this.now(),
      ...(!finished && this.waitingFor !== undefined && { waitingFor: clip(this.waitingFor, REPORT_LIMITS.waitingFor) }),
      page: {
        transport: wire.transport,
        answersAs,
        ...(this.options.userAgent && { userAgent: clip(this.options.userAgent, REPORT_LIMITS.userAgent) }),
      },
      checks,
    };
  }

  private noteFor(rule: string, check: ReportCheck): string | undefined {
    const notes: string[] = [];
    const skippedHere = this.options.vectors.vectors.filter((vector) => vector.rule === rule && this.skipped.has(vector.id));
    if (skippedHere.length > 0)
      notes.push(
        `${skippedHere.length} vector(s) need a transport that carries JSON text (${skippedHere.map((vector) => vector.id).join(', ')})`,
      );
    if (check.outcome === 'skip' && rule.startsWith('pay-')) notes.push('no pay_result arrived to judge');
    if (rule === 'pay-data-unchanged' && this.options.wire.carries === 'text' && this.answersAs.has('object'))
      notes.push(
        'the host posted JavaScript values, so numbers were compared as doubles: post the JSON text as a string to have every digit checked',
      );
    if (rule === 'invalid-message' && this.barrierNote) notes.push(this.barrierNote);
    return notes.length > 0 ? clip(notes.join('; '), REPORT_LIMITS.note) : undefined;
  }
}

const BUTTON_FOR: Record<string, string> = { success: 'Confirm', cancelled: 'Cancel', failed: 'Fail (or Cancel)' };

function expectations(answers: ExpectedAnswer[], hostSide: boolean): Expectation[] {
  return answers.map((answer) => ({ answer, hostSide }));
}

function paymentOf(request: SentRequest): string | undefined {
  try {
    const message = parse(request.sent) as { paymentData?: { orderPaymentId?: unknown } };
    const id = message.paymentData?.orderPaymentId;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

function describeAnswer(answer: ExpectedAnswer): string {
  const code = (answer as { error?: { code?: unknown } }).error?.code;
  return answer.type === 'error' && typeof code === 'string' ? `error ${code}` : answer.type;
}

function describeReceived(message: Record<string, unknown>): string {
  const code = (message.error as { code?: unknown } | undefined)?.code;
  if (message.type === 'error' && typeof code === 'string') return `error ${code}`;
  return typeof message.type === 'string' ? `a ${message.type}` : `a message whose type is ${describe(message.type)}`;
}

function safeText(value: unknown): string {
  try {
    return toText(value);
  } catch {
    return String(value);
  }
}

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

function seconds(ms: number): string {
  return `${ms / 1000} s`;
}
