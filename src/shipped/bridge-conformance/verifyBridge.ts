import { REPORT_LIMITS } from '../../../generated/sdk/bridge-conformance-contract.js';
import { maxJsonDepth, nestsDeeperThan, parseLossless } from '../../contract/json.js';
import type { ReportedCheck, ReportedRun } from '../conformance/reporters.js';
import { checkReport, checkRunList, packageVectors } from './report.js';
import type { Report } from './vectors.js';

/**
 * `minibridge verify bridge`: reads what the bridge conformance page reported to a sandbox
 * (`GET /sandbox/bridge-runs/{run}`) and turns it into the table and JUnit XML of the other
 * checks, one check per rule of this package's vectors (ADR 0040). A host app's CI opens the page
 * in its app (on a device or an emulator), then runs this with `--wait` while the page works.
 */
export interface VerifyBridgeOptions {
  /** The sandbox miniapp server the page reports to (`npm start`: http://127.0.0.1:8082). */
  url: string;
  /** The run's name (the page's `?run=`); the newest run when absent. */
  run?: string | undefined;
  /** How long to wait for the run to report and finish; 0 reads once. */
  waitSeconds: number;
  /** Time-out of each request to the sandbox. */
  requestTimeoutMs?: number | undefined;
  /** Between two looks at an unfinished run. */
  pollMs?: number | undefined;
}

const REQUEST_TIMEOUT_MS = 10_000;
const POLL_MS = 1_000;

type Look = { report: Report } | { waiting: string } | { stop: string };

export async function verifyBridge(options: VerifyBridgeOptions): Promise<ReportedRun> {
  const base = options.url.replace(/\/+$/, '');
  const pollMs = options.pollMs ?? POLL_MS;
  // Bounded by a number of looks, not a clock: --wait 60 is at most 61 looks a second apart.
  const looks = Math.floor((options.waitSeconds * 1000) / pollMs) + 1;
  let last: Look = { waiting: `no run has reported to ${base} yet` };
  for (let look = 1; look <= looks; look++) {
    last = await lookOnce(base, options.run, options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS);
    if ('stop' in last || ('report' in last && (last.report.finished || last.report.stopped))) break;
    if (look < looks) await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  const subject = 'bridge';
  if ('stop' in last) return { subject, url: base, results: [], passed: false, stopped: last.stop };
  if ('waiting' in last)
    return {
      subject,
      url: base,
      results: [],
      passed: false,
      stopped: `${last.waiting} (waited ${options.waitSeconds} s; --wait sets how long)`,
    };
  const { report } = last;
  if (report.stopped) return { subject, url: base, results: [], passed: false, stopped: `run ${report.run}: ${report.stopped}` };
  const results = resultsOf(report);
  const unfinished = report.finished
    ? undefined
    : `run ${report.run} did not finish within ${options.waitSeconds} s${report.waitingFor ? `; the page waits for: ${report.waitingFor}` : ''}`;
  if (unfinished) return { subject, url: `${base} run ${report.run}`, results: [], passed: false, stopped: unfinished };
  return { subject, url: `${base} run ${report.run}`, results, passed: results.every((result) => result.outcome !== 'fail') };
}

async function lookOnce(base: string, run: string | undefined, timeoutMs: number): Promise<Look> {
  let name = run;
  if (name === undefined) {
    const url = `${base}/sandbox/bridge-runs`;
    const listed = await getJson(url, timeoutMs);
    if ('stop' in listed) return listed;
    const list = checkRunList(listed.value);
    if (list.problem !== undefined)
      return { stop: `${url} answered something that is not a list of bridge conformance runs: ${list.problem}` };
    const newest = list.value.runs[0]?.run;
    if (newest === undefined) return { waiting: `no run has reported to ${base} yet` };
    name = newest;
  }
  const answer = await getJson(`${base}/sandbox/bridge-runs/${encodeURIComponent(name)}`, timeoutMs);
  if ('stop' in answer) return answer;
  if (answer.status === 404) return { waiting: `run ${name} has not reported to ${base}` };
  const checked = checkReport(answer.value);
  if (checked.problem !== undefined)
    return { stop: `${base} answered run ${name} with something that is not a bridge conformance report: ${checked.problem}` };
  return { report: checked.report };
}

/**
 * One GET, its whole answer read within timeoutMs and at most a report's `x-max-bytes`: whatever
 * answers at --url (a sandbox, or something else) cannot make the command hang, fill memory or
 * exhaust the stack.
 */
async function getJson(url: string, timeoutMs: number): Promise<{ status: number; value: unknown } | { stop: string }> {
  const signal = AbortSignal.timeout(timeoutMs);
  let status: number;
  let text: string;
  try {
    const response = await fetch(url, { signal, headers: { Accept: 'application/json' } });
    status = response.status;
    const read = await readText(response, REPORT_LIMITS.bytes);
    if (read === undefined) return { stop: `${url} answered more than ${REPORT_LIMITS.bytes} bytes (a report is at most that)` };
    text = read;
  } catch (error) {
    if (signal.aborted) return { stop: `${url} did not answer within ${timeoutMs / 1000} s` };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      stop: `cannot reach ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}. Check --url (the sandbox miniapp server, e.g. http://127.0.0.1:8082).`,
    };
  }
  if (status === 404) return { status: 404, value: undefined };
  if (status !== 200) return { stop: `${url} answered HTTP ${status}: ${text.slice(0, 300)}` };
  if (nestsDeeperThan(text)) return { stop: `${url} answered JSON nested more than ${maxJsonDepth()} deep` };
  try {
    return { status: 200, value: parseLossless(text) };
  } catch {
    return { stop: `${url} answered something that is not JSON: ${text.slice(0, 300)}` };
  }
}

/** The body as UTF-8 text, or undefined once it passes limit bytes (the rest is not read). */
async function readText(response: Response, limit: number): Promise<string | undefined> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One check per rule of this package's vectors, in their order; a rule the page did not report fails. */
function resultsOf(report: Report): ReportedCheck[] {
  const { rules } = packageVectors();
  const known = new Set(rules.map((rule) => rule.id));
  const results: ReportedCheck[] = rules.map((rule) => {
    const check = report.checks.find((item) => item.rule === rule.id);
    const base = { check: rule.id, operationId: slug(rule.area), operation: rule.area };
    if (!check) {
      return {
        ...base,
        outcome: 'fail',
        requests: 0,
        failures: [{ case: rule.id, reason: 'the page did not report this rule (a page built from other vectors?)' }],
      };
    }
    return {
      ...base,
      outcome: check.outcome === 'pending' ? 'fail' : check.outcome,
      requests: check.vectors,
      ...(check.note !== undefined && { note: check.note }),
      failures:
        check.outcome === 'pending'
          ? [{ case: rule.id, reason: 'not judged: the run did not finish' }]
          : check.failures.map((failure) => ({
              case: failure.vector,
              reason: failure.reason,
              details: [
                ...(failure.sent !== undefined ? [`sent: ${failure.sent}`] : []),
                ...(failure.received !== undefined ? failure.received.split('\n').map((line) => `received: ${line}`) : []),
              ],
            })),
    };
  });
  for (const check of report.checks.filter((item) => !known.has(item.rule))) {
    results.push({
      check: check.rule,
      operationId: 'unknown',
      operation: 'unknown',
      outcome: 'fail',
      requests: check.vectors,
      failures: [{ case: check.rule, reason: 'not a rule of this package (a page built from other vectors?)' }],
    });
  }
  return results;
}

function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');
}
