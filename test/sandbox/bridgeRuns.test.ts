import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_LIMITS } from '../../generated/sdk/bridge-conformance-contract.js';
import type { Report } from '../../src/shipped/bridge-conformance/vectors.js';
import { MAX_RUNS } from '../../src/tools/sandbox/bridgeRuns.js';
import { startSandbox, type RunningSandbox } from '../../src/tools/sandbox/startSandbox.js';
import { vectors } from '../support/bridgeVectors.js';

// The sandbox miniapp server keeps what the bridge conformance page reports: shape, size and
// identity of every report are checked, bad ones are refused in the control routes' error shape.

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ platformUrl: 'http://127.0.0.1:9', hostappPort: 0, miniappPort: 0 });
});

afterAll(async () => {
  await sandbox?.close();
});

function report(run: string, overrides: Partial<Report> = {}): Report {
  return {
    run,
    finished: true,
    passed: true,
    page: { transport: 'iframe', answersAs: 'object' },
    checks: vectors.rules.map((rule) => ({ rule: rule.id, outcome: 'pass', vectors: 1, failures: [] })),
    ...overrides,
  };
}

function put(run: string, body: string): Promise<Response> {
  return fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs/${run}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body,
  });
}

describe('the bridge conformance page on the sandbox', () => {
  it('is served at /bridge-conformance/ with its script, and loads nothing from elsewhere', async () => {
    const page = await fetch(sandbox.bridgeConformanceUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<script defer src="conformance.js"></script>');
    const script = await fetch(`${sandbox.bridgeConformanceUrl}conformance.js`);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    // The vectors travel inside the script, digits as written.
    expect(await script.text()).toContain('12345678901234567.89');
  });
});

describe('/sandbox/bridge-runs', () => {
  it('keeps a report and gives it back, newest first in the list', async () => {
    expect((await put('run-a', JSON.stringify(report('run-a')))).status).toBe(200);
    const second = await put('run-b', JSON.stringify(report('run-b', { finished: false, passed: false, waitingFor: 'press Confirm' })));
    expect(await second.json()).toEqual({ run: 'run-b', finished: false });
    expect(await (await fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs/run-a`)).json()).toEqual(report('run-a'));
    const list = (await (await fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs`)).json()) as { runs: Array<{ run: string }> };
    expect(list.runs.slice(0, 2).map((item) => item.run)).toEqual(['run-b', 'run-a']);
  });

  it('answers 404 NOT_FOUND for a run that never reported', async () => {
    const response = await fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs/nobody`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error_code: 'NOT_FOUND' });
  });

  it.each([
    ['not JSON', 'run-c', '{"run":', /not valid JSON/],
    ['not an object', 'run-c', '[1]', /must be a JSON object/],
    ['a report breaking its schema', 'run-c', JSON.stringify({ ...report('run-c'), extra: 1 }), /additional properties/],
    [
      'an unknown outcome',
      'run-c',
      JSON.stringify(report('run-c', { checks: [{ rule: 'x', outcome: 'fine' as never, vectors: 1, failures: [] }] })),
      /outcome/,
    ],
    ['a report for another run', 'run-c', JSON.stringify(report('run-d')), /for run run-d, not run-c/],
    ['a run name outside its pattern', 'a.b', JSON.stringify(report('a.b')), /a run is named by/],
    [
      'a member named __proto__',
      'run-c',
      `{"__proto__":{"passed":true},${JSON.stringify(report('run-c')).slice(1)}`,
      /__proto__|additional/,
    ],
    [
      'too many failures in a check',
      'run-c',
      JSON.stringify(
        report('run-c', {
          checks: [
            {
              rule: 'pay-status',
              outcome: 'fail',
              vectors: 1,
              failures: Array.from({ length: REPORT_LIMITS.failuresPerCheck + 1 }, () => ({ vector: 'v', reason: 'r' })),
            },
          ],
        }),
      ),
      /must NOT have more than/,
    ],
  ])('refuses %s with 400 INVALID_REQUEST and keeps nothing', async (_name, run, body, message) => {
    const response = await put(run, body);
    expect(response.status).toBe(400);
    const answer = (await response.json()) as { error_code: string; error_message: string };
    expect(answer.error_code).toBe('INVALID_REQUEST');
    expect(answer.error_message).toMatch(message);
    expect((await fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs/run-c`)).status).toBe(404);
  });

  it('refuses a body nested deeper than the contract allows with 400 INVALID_REQUEST, never a 500', async () => {
    // 10 000 brackets is a 20 kB body, far under the size limit: only its depth can be refused.
    const deep = `{"run":"run-f","x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const response = await put('run-f', deep);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error_code: 'INVALID_REQUEST',
      error_message: expect.stringMatching(/nested more than \d+ deep/),
    });
    expect((await fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs/run-f`)).status).toBe(404);
  });

  it('keeps runs named like Object.prototype members apart from the prototype', async () => {
    for (const run of ['__proto__', 'constructor', 'toString']) {
      expect((await put(run, JSON.stringify(report(run)))).status).toBe(200);
      expect(await (await fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs/${run}`)).json()).toEqual(report(run));
    }
    expect((await fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs/hasOwnProperty`)).status).toBe(404);
  });

  it('refuses a body past the control routes limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const response = await put('run-e', JSON.stringify(report('run-e', { stopped: 'x'.repeat(REPORT_LIMITS.bytes) })));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error_code: 'PAYLOAD_TOO_LARGE' });
  });

  it(`keeps the newest ${MAX_RUNS} runs`, async () => {
    for (let index = 0; index <= MAX_RUNS; index++)
      expect((await put(`many-${index}`, JSON.stringify(report(`many-${index}`)))).status).toBe(200);
    const list = (await (await fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs`)).json()) as { runs: Array<{ run: string }> };
    expect(list.runs).toHaveLength(MAX_RUNS);
    expect(list.runs[0]!.run).toBe(`many-${MAX_RUNS}`);
    expect(list.runs.map((item) => item.run)).not.toContain('many-0');
  });
});
