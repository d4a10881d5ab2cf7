/**
 * The bridge conformance page (generated/bridge-conformance/, ADR 0040): a miniapp page that,
 * opened inside a host app (an iframe, or a native web view with the `minibridge` /
 * `MinibridgeAndroid` handler), drives the host's bridge through every shared vector, shows the
 * results as a table, says when the person holding the phone must act, and sends the report to
 * the sandbox for `minibridge verify bridge`.
 *
 * URL parameters: `run` (the run's name; a random one otherwise), `report` (where to PUT the
 * report: a URL ending in `/`, the run is appended; default `/sandbox/bridge-runs/` of the
 * page's own origin when it is served over HTTP, none from a file), `hostOrigin` (in an iframe:
 * the host page's origin; default any), `userWaitMs` and `answerWaitMs` (how long to wait for a
 * person and for an answer that needs no one).
 */
import { RUN_ID_PATTERN } from '../../../generated/sdk/bridge-conformance-contract.js';
import { fromNativeHost, fromParentFrame, listenOn, type WindowLike } from '../sdk/endpoints.js';
import { createMinibridgeSdk } from '../sdk/miniapp.js';
import { runConformance, type ConformanceWire } from './driver.js';
import { readVectors, type Report, type Waiting } from './vectors.js';

/** The vectors file's text, put in by the build (scripts/build-bridge-conformance.ts). */
declare const BRIDGE_VECTORS_TEXT: string;

/** The little of the DOM this page uses (the package is compiled without the DOM library). */
interface Element {
  textContent: string | null;
  hidden: boolean;
  className: string;
  dataset: Record<string, string | undefined>;
  append(...nodes: Array<Element | string>): void;
  replaceChildren(...nodes: Array<Element | string>): void;
  setAttribute(name: string, value: string): void;
}
interface PageWindow {
  location: { search: string; href: string; protocol: string; origin: string };
  parent: PageWindow;
  navigator: { userAgent: string };
  document: { getElementById(id: string): Element | null; createElement(tag: string): Element };
  webkit?: { messageHandlers?: { minibridge?: { postMessage(text: string): void } } };
  MinibridgeAndroid?: { postMessage(text: string): void };
  postMessage(message: unknown, targetOrigin: string): void;
  fetch(url: string, init: { method: string; headers: Record<string, string>; body: string }): Promise<{ ok: boolean; status: number }>;
  crypto?: { getRandomValues(array: Uint8Array): Uint8Array };
}

// The page runs in a browser; the project compiles it without the DOM library, so it names what it uses.
const page = globalThis as unknown as PageWindow;
const $ = (id: string): Element => {
  const element = page.document.getElementById(id);
  if (!element) throw new Error(`the page lacks #${id}`);
  return element;
};

const DEFAULT_USER_WAIT_MS = 120_000;
const DEFAULT_ANSWER_WAIT_MS = 10_000;
const MAX_WAIT_MS = 600_000;

const params = new URLSearchParams(page.location.search);
const vectors = readVectors(BRIDGE_VECTORS_TEXT);

function waitParam(name: string, fallback: number): number {
  const value = Number(params.get(name) ?? fallback);
  return Number.isInteger(value) && value >= 100 && value <= MAX_WAIT_MS ? value : fallback;
}

function randomRun(): string {
  const bytes = new Uint8Array(6);
  page.crypto?.getRandomValues(bytes);
  return `run-${[...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

function reportBase(): string | undefined {
  const given = params.get('report');
  if (given) return given;
  return page.location.protocol === 'http:' || page.location.protocol === 'https:'
    ? new URL('/sandbox/bridge-runs/', page.location.href).href
    : undefined;
}

/**
 * How this page reaches its host app, as the JS SDK finds it (endpoints.ts detectEndpoint), and
 * accepting the same message events; but handing on the data as it arrived (text or value), since
 * the page judges the host's text.
 */
function wireOf(hostOrigin: string): ConformanceWire | undefined {
  // The same window, seen through the SDK's narrower WindowLike.
  const win = page as unknown as WindowLike;
  const native = page.webkit?.messageHandlers?.minibridge ?? page.MinibridgeAndroid;
  if (native) {
    return {
      transport: page.webkit?.messageHandlers?.minibridge ? 'webkit' : 'android',
      carries: 'text',
      send: (data) => native.postMessage(data as string),
      listen: (receive) => listenOn(win, fromNativeHost(win), receive),
    };
  }
  if (page.parent && page.parent !== page) {
    return {
      transport: 'iframe',
      carries: 'value',
      send: (data) => page.parent.postMessage(data, hostOrigin),
      listen: (receive) => listenOn(win, fromParentFrame(win, hostOrigin), receive),
    };
  }
  return undefined;
}

/** Sends each report in turn (a later one never overtakes an earlier one). */
function reporter(base: string | undefined, run: string): (report: Report) => Promise<void> {
  let chain = Promise.resolve();
  return (report) => {
    if (!base) return chain;
    const body = JSON.stringify(report);
    chain = chain.then(async () => {
      try {
        const answer = await page.fetch(new URL(encodeURIComponent(run), base).href, {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json' },
          body,
        });
        $('report-status').textContent = answer.ok
          ? `Report sent to ${base}${run}${report.finished ? '' : ' (the run goes on)'}.`
          : `The sandbox refused the report: HTTP ${answer.status}.`;
      } catch (error) {
        $('report-status').textContent = `Could not send the report to ${base}: ${error instanceof Error ? error.message : String(error)}.`;
      }
    });
    return chain;
  };
}

function render(report: Report): void {
  const titles = new Map(vectors.rules.map((rule) => [rule.id, rule]));
  const rows = report.checks.map((check) => {
    const row = page.document.createElement('tr');
    row.dataset.rule = check.rule;
    row.dataset.outcome = check.outcome;
    const cells = [
      titles.get(check.rule)?.title ?? check.rule,
      titles.get(check.rule)?.area ?? '',
      check.outcome === 'pending' ? '…' : check.outcome,
      String(check.vectors),
      [...check.failures.map((failure) => `${failure.vector}: ${failure.reason}`), check.note ?? ''].filter(Boolean).join('\n'),
    ];
    for (const [index, text] of cells.entries()) {
      const cell = page.document.createElement(index === 0 ? 'th' : 'td');
      if (index === 0) cell.setAttribute('scope', 'row');
      if (index === 2) cell.className = `outcome ${check.outcome}`;
      cell.textContent = text;
      row.append(cell);
    }
    return row;
  });
  $('checks').replaceChildren(...rows);
  if (report.finished) {
    const counts = { pass: 0, fail: 0, skip: 0 };
    for (const check of report.checks) if (check.outcome in counts) counts[check.outcome as keyof typeof counts] += 1;
    const result = $('result');
    result.dataset.passed = String(report.passed);
    result.className = report.passed ? 'passed' : 'failed';
    result.textContent = `${report.passed ? 'PASSED' : 'FAILED'}: ${counts.pass} passed, ${counts.fail} failed, ${counts.skip} not judged.`;
    $('status').textContent = 'Finished.';
  }
}

let prompts = 0;

function showWaiting(waiting: Waiting | undefined): void {
  const prompt = $('prompt');
  if (!waiting || waiting.for === 'answer-custom-events') {
    prompt.hidden = true;
    prompt.textContent = '';
    delete prompt.dataset.for;
    $('status').textContent = waiting ? waiting.message : 'Running…';
    return;
  }
  // A new number for every prompt, so a UI test can wait for the next one.
  prompts += 1;
  prompt.dataset.step = String(prompts);
  prompt.dataset.for = waiting.for;
  if (waiting.orderPaymentId) prompt.dataset.orderPaymentId = waiting.orderPaymentId;
  else delete prompt.dataset.orderPaymentId;
  prompt.textContent = waiting.message;
  prompt.hidden = false;
  $('status').textContent = 'Waiting for you.';
}

async function main(): Promise<void> {
  const run = params.get('run') ?? randomRun();
  $('run').textContent = run;
  const hostOrigin = params.get('hostOrigin') ?? '*';
  const wire = wireOf(hostOrigin);
  const send = reporter(reportBase(), run);
  if (!new RegExp(RUN_ID_PATTERN).test(run)) {
    $('status').textContent = `The run name must match ${RUN_ID_PATTERN}.`;
    return;
  }
  $('transport').textContent = wire?.transport ?? 'none';
  if (!wire) {
    const stopped =
      'This page is not inside a host app: no parent frame and no minibridge / MinibridgeAndroid handler. Open it in your host app.';
    $('status').textContent = stopped;
    await send({ run, finished: true, passed: false, stopped, page: { transport: 'none', answersAs: 'none' }, checks: [] });
    return;
  }
  const sdk = createMinibridgeSdk({ hostOrigin });
  $('status').textContent = 'Running…';
  let sent: Promise<void> = Promise.resolve();
  const report = await runConformance({
    vectors,
    wire,
    run,
    userWaitMs: waitParam('userWaitMs', DEFAULT_USER_WAIT_MS),
    answerWaitMs: waitParam('answerWaitMs', DEFAULT_ANSWER_WAIT_MS),
    subscribe: (callback) => sdk.subscribe((event) => callback(event.detail)),
    onUpdate: (update) => {
      render(update);
      sent = send(update);
    },
    onWaiting: showWaiting,
    userAgent: page.navigator.userAgent,
  });
  sdk.close();
  render(report);
  await sent;
}

void main().catch((error: unknown) => {
  $('status').textContent = `The page failed: ${error instanceof Error ? error.message : String(error)}`;
});
