import type { SentRequest } from './exchange.js';
import type { CheckResult, Failure, VerifyReport } from './runner.js';

/**
 * What the reporters print: a `verify` run against an API, or the bridge conformance page's run
 * (`verify bridge`), whose checks are the bridge rules and whose failures carry the messages
 * (`details`) instead of an HTTP request.
 */
export type ReportedRun = Omit<VerifyReport, 'subject' | 'results'> & { subject: string; results: ReportedCheck[] };
export type ReportedCheck = Omit<CheckResult, 'check' | 'failures'> & { check: string; failures: ReportedFailure[] };
export type ReportedFailure = Pick<Failure, 'case' | 'reason'> & Partial<Omit<Failure, 'case' | 'reason'>> & { details?: string[] };

/** The lines under a failure: its own details, or the HTTP request and answer. */
function failureLines(item: ReportedFailure): string[] {
  return item.details ?? (item.request?.url ? describeFailure(item as Failure) : []);
}

const SHOWN_FAILURES = 5;
const BODY_LIMIT = 1_500;

// eslint-disable-next-line no-control-regex -- the characters a terminal or a CI log acts on
const CONTROLS = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- as above, and the line feed
const CONTROLS_AND_NEWLINES = /[\u0000-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/**
 * Text from a server's answer or a report, made safe to print: escape sequences, carriage returns,
 * bell and bidirectional overrides are shown as `\uXXXX` instead of acting on the terminal or the
 * CI log (hiding a line, rewriting one as PASSED). Single-line fields show a line feed the same way.
 */
function printable(text: string, keepNewlines = false): string {
  return text.replace(keepNewlines ? CONTROLS : CONTROLS_AND_NEWLINES, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A readable table (check, operation, result) and, under it, each failure with the request that failed. */
export function tableReport(report: ReportedRun): string {
  if (report.stopped) return `minibridge verify ${report.subject} ${printable(report.url)}\n\nSTOPPED: ${printable(report.stopped, true)}`;
  const rows = report.results.map((result) =>
    [result.check, result.operation, verdictText(result), result.note ?? ''].map((cell) => printable(cell)),
  );
  const header = ['check', 'operation', 'result', 'note'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  const lines = [
    `minibridge verify ${report.subject} ${printable(report.url)}`,
    '',
    line(header),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map(line),
  ];
  const failed = report.results.filter((result) => result.outcome === 'fail');
  for (const result of failed) {
    lines.push(
      '',
      `FAIL ${printable(result.check)} · ${printable(result.operation)}: ${result.failures.length} of ${Math.max(result.requests, result.failures.length)} request(s)`,
    );
    result.failures.slice(0, SHOWN_FAILURES).forEach((item, index) => {
      lines.push(`  - ${printable(item.case)}: ${printable(item.reason)}`);
      if (index === 0) lines.push(...failureLines(item).map((text) => `      ${printable(text, true)}`));
    });
    if (result.failures.length > SHOWN_FAILURES) lines.push(`  … and ${result.failures.length - SHOWN_FAILURES} more`);
  }
  const counts = { pass: 0, fail: 0, skip: 0 };
  for (const result of report.results) counts[result.outcome] += 1;
  lines.push('', `${report.passed ? 'PASSED' : 'FAILED'}: ${counts.pass} passed, ${counts.fail} failed, ${counts.skip} not applicable`);
  return lines.join('\n');
}

function verdictText(result: ReportedCheck): string {
  if (result.outcome === 'skip') return 'n/a';
  if (result.outcome === 'pass') return `pass (${result.requests})`;
  return `FAIL (${result.failures.length}/${Math.max(result.requests, result.failures.length)})`;
}

/** The failing request and its answer, as text a partner can replay. */
export function describeFailure(item: Failure): string[] {
  const lines = [`${item.shrunk ? 'smallest failing request' : 'request'}: ${describeRequest(item.request)}`];
  if (item.request.body !== undefined) lines.push(`body: ${truncate(item.request.body)}`);
  lines.push(item.status === 0 ? 'answer: none' : `answer: HTTP ${item.status} ${truncate(item.response)}`);
  return lines;
}

function describeRequest(request: SentRequest): string {
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `${name}: ${name.toLowerCase() === 'authorization' ? redact(value) : value}`)
    .join('; ');
  return `${request.method} ${request.url}${headers ? ` [${headers}]` : ''}`;
}

/** Keeps the scheme and a hint, never the credentials themselves. */
function redact(authorization: string): string {
  const [scheme] = authorization.split(' ');
  return `${scheme} …`;
}

function truncate(text: string): string {
  return text.length > BODY_LIMIT ? `${text.slice(0, BODY_LIMIT)}… (${text.length} characters)` : text;
}

/** JUnit XML: one test suite per operation, one test case per check. */
export function junitReport(report: ReportedRun): string {
  if (report.stopped) {
    const stopped = `    <testcase classname="minibridge.verify.${xml(report.subject)}" name="preflight">\n      <failure message="${xml(report.stopped.split('\n')[0]!)}" type="preflight">${xml(report.stopped)}</failure>\n    </testcase>`;
    return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="minibridge verify ${xml(report.subject)}" tests="1" failures="1">\n  <testsuite name="${xml(`${report.subject} preflight`)}" tests="1" failures="1" errors="0" skipped="0">\n${stopped}\n  </testsuite>\n</testsuites>\n`;
  }
  const suites = new Map<string, ReportedCheck[]>();
  for (const result of report.results) suites.set(result.operation, [...(suites.get(result.operation) ?? []), result]);
  const body = [...suites].map(([operation, results]) => {
    const failures = results.filter((result) => result.outcome === 'fail').length;
    const skipped = results.filter((result) => result.outcome === 'skip').length;
    const cases = results.map((result) => {
      const open = `    <testcase classname="${xml(`minibridge.verify.${report.subject}.${result.operationId}`)}" name="${xml(result.check)}">`;
      if (result.outcome === 'skip') return `${open}<skipped${result.note ? ` message="${xml(result.note)}"` : ''}/></testcase>`;
      if (result.outcome === 'pass') return `${open}</testcase>`;
      const text = result.failures
        .flatMap((item, index) => [`${item.case}: ${item.reason}`, ...(index === 0 ? failureLines(item) : [])])
        .join('\n');
      return `${open}\n      <failure message="${xml(`${result.failures.length} failing request(s): ${result.failures[0]!.case}`)}" type="${xml(result.check)}">${xml(text)}</failure>\n    </testcase>`;
    });
    return `  <testsuite name="${xml(`${report.subject} ${operation}`)}" tests="${results.length}" failures="${failures}" errors="0" skipped="${skipped}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  const total = report.results.length;
  const failed = report.results.filter((result) => result.outcome === 'fail').length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="minibridge verify ${xml(report.subject)}" tests="${total}" failures="${failed}">\n${body.join('\n')}\n</testsuites>\n`;
}

function xml(text: string): string {
  // XML 1.0 forbids most control characters even escaped, U+FFFE, U+FFFF and lone surrogates; they
  // can only come from a server's answer or a report.
  return (
    text
      // eslint-disable-next-line no-control-regex -- JUnit XML 1.0 cannot carry these characters, so they are replaced
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD')
      .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
  );
}
