import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/shipped/cli.js';
import { verifyBridge } from '../../src/shipped/bridge-conformance/verifyBridge.js';
import { REPORT_LIMITS } from '../../generated/sdk/bridge-conformance-contract.js';
import type { Report } from '../../src/shipped/bridge-conformance/vectors.js';
import { startSandbox, type RunningSandbox } from '../../src/tools/sandbox/startSandbox.js';
import { vectors } from '../support/bridgeVectors.js';

// `minibridge verify bridge` reads what the conformance page reported to the sandbox: it stops with
// one message when there is nothing to read, fails a rule the page did not report, and waits,
// bounded, for a run still in progress.

let sandbox: RunningSandbox;
let workDir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ platformUrl: 'http://127.0.0.1:9', hostappPort: 0, miniappPort: 0 });
  workDir = await mkdtemp(path.join(os.tmpdir(), 'minibridge-verify-bridge-'));
});

afterAll(async () => {
  await sandbox?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

function report(run: string, overrides: Partial<Report> = {}): Report {
  return {
    run,
    finished: true,
    passed: true,
    page: { transport: 'webkit', answersAs: 'text' },
    checks: vectors.rules.map((rule) => ({ rule: rule.id, outcome: 'pass', vectors: 2, failures: [] })),
    ...overrides,
  };
}

async function put(value: Report): Promise<void> {
  const response = await fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs/${value.run}`, { method: 'PUT', body: JSON.stringify(value) });
  expect(response.status).toBe(200);
}

async function verify(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((text: unknown) => void out.push(String(text)));
  const error = vi.spyOn(console, 'error').mockImplementation((text: unknown) => void err.push(String(text)));
  try {
    const code = await main(['verify', 'bridge', ...args]);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

describe('minibridge verify bridge', () => {
  it('passes a finished run that passed, one row per rule, and writes JUnit XML', async () => {
    await put(report('ci-pass'));
    const junit = path.join(workDir, 'pass.xml');
    const result = await verify(['--url', sandbox.miniappUrl, '--run', 'ci-pass', '--junit', junit]);
    expect(result.code, result.out).toBe(0);
    for (const rule of vectors.rules) expect(result.out).toMatch(new RegExp(`^${rule.id} +${rule.area} +pass \\(2\\)`, 'm'));
    expect(await readFile(junit, 'utf8')).toContain(`tests="${vectors.rules.length}" failures="0"`);
  });

  it('reads the newest run without --run', async () => {
    await put(report('ci-older'));
    await put(
      report('ci-newest', {
        passed: false,
        checks: report('x').checks.map((check) =>
          check.rule === 'pay-status'
            ? {
                ...check,
                outcome: 'fail',
                failures: [{ vector: 'pay-full', reason: 'paymentData.status is missing', received: '{"a":1}\n{"b":2}' }],
              }
            : check,
        ),
      }),
    );
    const result = await verify(['--url', sandbox.miniappUrl]);
    expect(result.code).toBe(1);
    expect(result.out).toContain(`minibridge verify bridge ${sandbox.miniappUrl} run ci-newest`);
    expect(result.out).toContain('FAIL pay-status · pay: 1 of 2 request(s)');
    expect(result.out).toContain('  - pay-full: paymentData.status is missing');
    expect(result.out).toContain('      received: {"a":1}\n      received: {"b":2}');
  });

  it('prints no terminal control sequence and writes well-formed XML 1.0 whatever the report says', async () => {
    // Anything can PUT a report to a sandbox; its strings reach a CI log and a JUnit parser.
    const hostile = 'x\u001b[2K\u001b[1A\rPASSED\u0007 \u009b31m \u202eevil \uffff \ufffe \ud800 end';
    await put(
      report('ci-hostile', {
        passed: false,
        checks: report('x').checks.map((check) =>
          check.rule === 'pay-status'
            ? {
                ...check,
                outcome: 'fail',
                note: hostile,
                failures: [{ vector: hostile, reason: hostile, sent: hostile, received: hostile }],
              }
            : check,
        ),
      }),
    );
    const junit = path.join(workDir, 'hostile.xml');
    const result = await verify(['--url', sandbox.miniappUrl, '--run', 'ci-hostile', '--junit', junit]);
    expect(result.code).toBe(1);
    expect(result.out).toContain('PASSED');
    // eslint-disable-next-line no-control-regex -- the characters a terminal acts on
    expect(result.out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(result.out).toContain('x\\u001b[2K\\u001b[1A\\u000dPASSED\\u0007');
    const xml = await readFile(junit, 'utf8');
    expect(xml).toContain('PASSED');
    // XML 1.0's Char production: anything else makes the file unreadable to a JUnit parser.
    expect(xml).toMatch(/^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u);
  });

  it('fails a rule the page did not report, and one this package does not know', async () => {
    const checks = report('x').checks.filter((check) => check.rule !== 'host-event-subscribe');
    await put(report('ci-other-vectors', { checks: [...checks, { rule: 'future-rule', outcome: 'pass', vectors: 1, failures: [] }] }));
    const junit = path.join(workDir, 'other.xml');
    const result = await verify(['--url', sandbox.miniappUrl, '--run', 'ci-other-vectors', '--junit', junit]);
    expect(result.code).toBe(1);
    expect(result.out).toContain('host-event-subscribe: the page did not report this rule');
    expect(result.out).toContain('future-rule: not a rule of this package');
    expect(await readFile(junit, 'utf8')).toContain('failures="2"');
  });

  it('stops with the page’s own message when the page found no host app', async () => {
    await put(
      report('ci-no-host', {
        passed: false,
        stopped: 'This page is not inside a host app.',
        page: { transport: 'none', answersAs: 'none' },
        checks: [],
      }),
    );
    const result = await verify(['--url', sandbox.miniappUrl, '--run', 'ci-no-host']);
    expect(result.code).toBe(1);
    expect(result.out).toContain('STOPPED: run ci-no-host: This page is not inside a host app.');
  });

  it('stops when the run has not reported, or has not finished, after --wait', async () => {
    const missing = await verify(['--url', sandbox.miniappUrl, '--run', 'ci-never']);
    expect(missing.code).toBe(1);
    expect(missing.out).toContain(`STOPPED: run ci-never has not reported to ${sandbox.miniappUrl} (waited 0 s; --wait sets how long)`);
    await put(
      report('ci-waiting', { finished: false, passed: false, waitingFor: 'Finish the payment sheet for hop_vec_full now: press Confirm.' }),
    );
    const waiting = await verify(['--url', sandbox.miniappUrl, '--run', 'ci-waiting', '--wait', '1']);
    expect(waiting.code).toBe(1);
    expect(waiting.out).toContain(
      'STOPPED: run ci-waiting did not finish within 1 s; the page waits for: Finish the payment sheet for hop_vec_full now',
    );
  });

  it('waits for a run in progress until it finishes', async () => {
    await put(report('ci-later', { finished: false, passed: false }));
    const pending = verify(['--url', sandbox.miniappUrl, '--run', 'ci-later', '--wait', '30']);
    // The page finishes while the command looks (it looks once a second).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await put(report('ci-later'));
    const result = await pending;
    expect(result.code, result.out).toBe(0);
  }, 40_000);

  it('stops with one message when the sandbox cannot be reached or answers something else', async () => {
    const closed = await new Promise<Server>((resolve) => {
      const server = express().listen(0, '127.0.0.1', () => resolve(server));
    });
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await verify(['--url', url, '--run', 'x']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.out).toContain(`STOPPED: cannot reach ${url}/sandbox/bridge-runs/x: ECONNREFUSED`);

    const impostor = await new Promise<Server>((resolve) => {
      const app = express().get('/sandbox/bridge-runs/x', (_req, res) => res.json({ run: 'x', passed: true }));
      const server = app.listen(0, '127.0.0.1', () => resolve(server));
    });
    const other = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
    const wrong = await verify(['--url', other, '--run', 'x']);
    await new Promise<void>((resolve) => impostor.close(() => resolve()));
    expect(wrong.code).toBe(1);
    expect(wrong.out).toMatch(/STOPPED: .* is not a bridge conformance report: \/ must have required property 'finished'/);
  });

  describe('against a sandbox that answers something else', () => {
    let impostor: Server;
    let url: string;
    /** What the impostor answers, by path. */
    const answers = new Map<string, (res: express.Response) => void>();

    beforeAll(async () => {
      const app = express().use((req, res) => {
        const answer = answers.get(req.path);
        if (answer) answer(res);
        else res.status(404).json({ error_code: 'NOT_FOUND', error_message: 'none' });
      });
      impostor = await new Promise<Server>((resolve) => {
        const server = app.listen(0, '127.0.0.1', () => resolve(server));
      });
      url = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      impostor.closeAllConnections();
      await new Promise<void>((resolve) => impostor.close(() => resolve()));
    });

    const json = (text: string) => (res: express.Response) => void res.type('application/json').send(text);

    it.each([
      ['null', 'null'],
      ['an array', '[]'],
      ['runs that are not a list', '{"runs":{"0":{"run":"x"}}}'],
      ['a run name outside its pattern', '{"runs":[{"run":"../../etc","finished":true,"passed":true}]}'],
    ])('stops, and still writes JUnit, when the list of runs is %s', async (_name, text) => {
      answers.clear();
      answers.set('/sandbox/bridge-runs', json(text));
      const junit = path.join(workDir, 'impostor-list.xml');
      const result = await verify(['--url', url, '--junit', junit]);
      expect(result.code).toBe(1);
      expect(result.out).toMatch(/STOPPED: .*\/sandbox\/bridge-runs answered something that is not a list of bridge conformance runs/);
      expect(await readFile(junit, 'utf8')).toContain('name="preflight"');
    });

    it('stops at the report size limit instead of reading an endless answer', async () => {
      answers.clear();
      let written = 0;
      answers.set('/sandbox/bridge-runs/big', (res) => {
        res.type('application/json');
        res.write('{"run":"big","stopped":"');
        // Written until the client hangs up; bounded so a client that never does cannot hang the test.
        const chunk = 'a'.repeat(64 * 1024);
        const pump = () => {
          while (!res.destroyed && written < 64 * REPORT_LIMITS.bytes) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end('"}');
        };
        res.on('close', () => (written = Infinity));
        pump();
      });
      const result = await verify(['--url', url, '--run', 'big']);
      expect(result.code).toBe(1);
      expect(result.out).toContain(`answered more than ${REPORT_LIMITS.bytes} bytes`);
    });

    it('stops when the answer stalls after its headers (the request time-out covers the body)', async () => {
      answers.clear();
      answers.set('/sandbox/bridge-runs/slow', (res) => {
        res.type('application/json');
        res.write('{"run":"slow",');
      });
      const result = await verifyBridge({ url, run: 'slow', waitSeconds: 0, requestTimeoutMs: 300 });
      expect(result.passed).toBe(false);
      expect(result.stopped).toMatch(/did not answer within 0.3 s/);
    });

    it('stops on an answer nested deeper than the contract allows', async () => {
      answers.clear();
      answers.set('/sandbox/bridge-runs/deep', json(`{"run":"deep","checks":${'['.repeat(20_000)}${']'.repeat(20_000)}}`));
      const result = await verify(['--url', url, '--run', 'deep']);
      expect(result.code).toBe(1);
      expect(result.out).toMatch(/STOPPED: .* nested more than \d+ deep/);
    });
  });

  it.each([
    [[], /--url <sandbox> is required/],
    [['--url', 'ftp://x'], /--url <sandbox> is required/],
    [['--url', 'http://x', '--wait', 'soon'], /--wait is a whole number of seconds/],
    [['--url', 'http://x', '--wait', '99999'], /at most 3600/],
    [['--url', 'http://x', '--run', '../etc'], /--run is the name the page was opened with/],
    [['--url', 'http://x', 'extra'], /unexpected argument extra/],
  ])('exits 2 with the usage for %j', async (args, message) => {
    const result = await verify(args as string[]);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
    expect(result.err).toContain('minibridge verify bridge --url <sandbox>');
  });
});
