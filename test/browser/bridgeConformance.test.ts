import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import express from 'express';
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAITING_EVENT_TYPE } from '../../generated/sdk/bridge-conformance-contract.js';
import { launchChromium } from '../../scripts/lib/docs-browser.js';
import { repoRoot } from '../../scripts/lib/paths.js';
import type { Report } from '../../src/shipped/bridge-conformance/vectors.js';
import { startSandbox, type RunningSandbox } from '../../src/tools/sandbox/startSandbox.js';
import { BROKEN_HOSTS, type HostVariant } from '../support/bridgeHosts.js';
import { vectors } from '../support/bridgeVectors.js';

// The bridge conformance page in Chromium, served by the sandbox miniapp server as a partner gets
// it, inside two kinds of host: the project's web host bridge (minibridge-host.js) in a test page
// whose scripted person acts on the page's prompts, with broken variants that each fail their own
// check alone; and the sandbox's host-app simulator, driven through its own buttons when the page
// says a person must act. Then `minibridge verify bridge` reads the runs from the sandbox.
// Chromium is required: without it these tests fail (`npm test` installs it when missing: ADR 0044).

const RUN_MS = 90_000;
/** Bounds for hosts that keep the page waiting; the good hosts answer long before them. */
const BROKEN_WAITS = 'userWaitMs=5000&answerWaitMs=5000';

let browser: Browser;
let sandbox: RunningSandbox;
let harness: { server: Server; url: string };
let workDir: string;

beforeAll(async () => {
  browser = await launchChromium();
  // No platform: the page talks to its host app only, and reports to the sandbox miniapp server.
  sandbox = await startSandbox({ platformUrl: 'http://127.0.0.1:9', hostappPort: 0, miniappPort: 0 });
  const bundle = await build({
    entryPoints: [path.join(repoRoot, 'test', 'support', 'bridgeHosts.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    logLevel: 'silent',
  });
  const app = express();
  app.get('/host.html', (_req, res) => res.sendFile(path.join(repoRoot, 'test', 'browser', 'bridgeHarness', 'host.html')));
  app.get('/minibridge-host.js', (_req, res) =>
    res.type('text/javascript').sendFile(path.join(repoRoot, 'generated', 'sdk', 'minibridge-host.js')),
  );
  app.get('/harness.js', (_req, res) => res.type('text/javascript').send(bundle.outputFiles[0]!.text));
  app.get('/hostile.html', (_req, res) => res.type('text/html').send(HOSTILE_HOST));
  const server = await new Promise<Server>((resolve) => {
    const started = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  harness = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  workDir = await mkdtemp(path.join(os.tmpdir(), 'minibridge-bridge-'));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sandbox?.close();
  await new Promise<void>((resolve) => (harness ? harness.server.close(() => resolve()) : resolve()));
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

interface Opened {
  page: Page;
  errors: string[];
}

async function open(url: string): Promise<Opened> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  // Nothing leaves the machine: the page, the hosts and the SDK load nothing from elsewhere.
  await page.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => {
    errors.push(`external request: ${route.request().url()}`);
    return route.abort('internetdisconnected');
  });
  await page.goto(url);
  return { page, errors };
}

function conformanceUrl(run: string, extra = ''): string {
  return `${sandbox.bridgeConformanceUrl}?run=${run}${extra ? `&${extra}` : ''}`;
}

function hostUrl(variant: HostVariant, run: string, extra = ''): string {
  const query = new URLSearchParams({ variant, waiting: WAITING_EVENT_TYPE, miniapp: conformanceUrl(run, extra) });
  return `${harness.url}/host.html?${query}`;
}

async function conformanceFrame(page: Page): Promise<Frame> {
  const handle = await page.locator('iframe').first().elementHandle({ timeout: RUN_MS });
  const frame = await handle!.contentFrame();
  await frame!.waitForURL(/bridge-conformance/, { timeout: RUN_MS });
  return frame!;
}

async function finished(frame: Frame): Promise<boolean> {
  const result = frame.locator('#result[data-passed]');
  await result.waitFor({ timeout: RUN_MS });
  return (await result.getAttribute('data-passed')) === 'true';
}

async function storedReport(run: string): Promise<Report> {
  // The page's last PUT may still be on its way when the table shows the result.
  let report: Report | undefined;
  await expect
    .poll(
      async () => {
        const response = await fetch(`${sandbox.miniappUrl}/sandbox/bridge-runs/${run}`);
        report = response.status === 200 ? ((await response.json()) as Report) : undefined;
        return report?.finished ?? false;
      },
      { timeout: 15_000 },
    )
    .toBe(true);
  return report!;
}

/**
 * A host page that answers every request of the conformance page with markup and script in each
 * string it controls, and posts more of it unasked: the page must show all of it as text.
 */
const HOSTILE_HOST = `<!doctype html><html><body>
<iframe id="miniapp" sandbox="allow-scripts allow-same-origin"></iframe>
<script>
  const frame = document.getElementById('miniapp');
  const url = new URLSearchParams(location.search).get('miniapp');
  const evil = '<img src=x onerror="top.pwned=1"><script>top.pwned=2<\\/script><b>bold</b>';
  let n = 0;
  const post = (message) => frame.contentWindow.postMessage({ protocol: 'minibridge-bridge', version: 1, id: 'h' + ++n + evil, ...message }, '*');
  addEventListener('message', (event) => {
    if (event.source !== frame.contentWindow || typeof event.data !== 'object' || event.data === null) return;
    const id = event.data.id;
    if (typeof id !== 'string') return;
    post({ type: 'error', replyTo: id, error: { code: evil, message: evil } });
    post({ type: evil, replyTo: id, detail: evil });
    post({ type: 'pay_result', replyTo: id, paymentData: { amount: evil, currency: evil, orderPaymentId: evil, status: evil } });
  });
  frame.src = url;
</script></body></html>`;

/** The broken hosts the issue names; the other variants are run in node (test/sdk/conformanceDriver.test.ts). */
const REQUIRED_BROKEN = ['answers-twice', 'drops-status', 'rounds-amount', 'second-sheet', 'wrong-reply-to', 'never-answers'];

const failing = (report: Report) => report.checks.filter((check) => check.outcome === 'fail').map((check) => check.rule);

async function minibridge(args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['bin/minibridge.js', ...args], { cwd: repoRoot, timeout: 60_000 });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

describe('the conformance page against the project web host bridge', () => {
  it('passes every check, shows the table, and minibridge verify bridge reads it (table and JUnit)', async () => {
    const run = 'chromium-good';
    const { page, errors } = await open(hostUrl('good', run));
    const frame = await conformanceFrame(page);
    expect(await finished(frame)).toBe(true);
    const rows = frame.locator('#checks tr');
    expect(await rows.count()).toBe(vectors.rules.length);
    expect(await frame.locator('#checks tr[data-outcome="pass"]').count()).toBe(vectors.rules.length);
    expect(await frame.locator('#transport').textContent()).toBe('iframe');
    const report = await storedReport(run);
    expect(report).toMatchObject({ run, finished: true, passed: true, page: { transport: 'iframe', answersAs: 'object' } });
    expect(report.page.userAgent).toMatch(/Chrome/);
    await page.close();
    expect(errors).toEqual([]);

    const junit = path.join(workDir, 'bridge.xml');
    const verified = await minibridge(['verify', 'bridge', '--url', sandbox.miniappUrl, '--run', run, '--junit', junit]);
    expect(verified.code, verified.stdout).toBe(0);
    expect(verified.stdout).toMatch(/^pay-answered-once +pay +pass \(3\)/m);
    expect(verified.stdout).toContain(`PASSED: ${vectors.rules.length} passed, 0 failed`);
    const xml = await readFile(junit, 'utf8');
    expect(xml).toContain(`<testsuites name="minibridge verify bridge" tests="${vectors.rules.length}" failures="0">`);
    expect(xml).toContain('<testcase classname="minibridge.verify.bridge.pay" name="pay-data-unchanged">');
  }, 120_000);

  it.each(Object.entries(BROKEN_HOSTS).filter(([variant]) => REQUIRED_BROKEN.includes(variant)))(
    'the %s host fails %s and no other check',
    async (variant, rule) => {
      const run = `chromium-${variant}`;
      const { page, errors } = await open(hostUrl(variant as HostVariant, run, BROKEN_WAITS));
      const frame = await conformanceFrame(page);
      expect(await finished(frame)).toBe(false);
      expect(await frame.locator('#checks tr[data-outcome="fail"]').count()).toBe(1);
      expect(await frame.locator(`#checks tr[data-rule="${rule}"]`).getAttribute('data-outcome')).toBe('fail');
      const report = await storedReport(run);
      expect(failing(report), JSON.stringify(report.checks, null, 1)).toEqual([rule]);
      await page.close();
      expect(errors).toEqual([]);
    },
    120_000,
  );

  it('minibridge verify bridge exits 1 for a broken host and prints the failing messages', async () => {
    // A run of its own against the host that rounds the amount, stored before the command reads it.
    const run = 'chromium-verify-rounds-amount';
    const { page, errors } = await open(hostUrl('rounds-amount', run, BROKEN_WAITS));
    expect(await finished(await conformanceFrame(page))).toBe(false);
    expect((await storedReport(run)).passed).toBe(false);
    await page.close();
    expect(errors).toEqual([]);
    const result = await minibridge(['verify', 'bridge', '--url', sandbox.miniappUrl, '--run', run]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^pay-data-unchanged +pay +FAIL/m);
    expect(result.stdout).toContain('paymentData.amount is the number 125001, not the string "125000.50"');
    expect(result.stdout).toContain('sent: {"protocol":"minibridge-bridge","version":1,"id":"p-1"');
    expect(result.stdout).toContain('FAILED: 12 passed, 1 failed');
  }, 120_000);
});

describe('the conformance page against a hostile host', () => {
  it('shows what the host posts as text: no markup, no script', async () => {
    const run = 'chromium-hostile';
    const miniapp = conformanceUrl(run, 'userWaitMs=1000&answerWaitMs=1000');
    const { page, errors } = await open(`${harness.url}/hostile.html?${new URLSearchParams({ miniapp })}`);
    const frame = await conformanceFrame(page);
    expect(await finished(frame)).toBe(false);
    const table = frame.locator('#checks');
    expect(await table.textContent()).toContain('<img src=x onerror="top.pwned=1">');
    expect(await frame.locator('#checks img, #checks script, #checks b, #prompt *, #status *').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { pwned?: unknown }).pwned)).toBeUndefined();
    expect(await frame.evaluate(() => (globalThis as { pwned?: unknown }).pwned)).toBeUndefined();
    const report = await storedReport(run);
    expect(report.passed).toBe(false);
    await page.close();
    expect(errors).toEqual([]);
  }, 120_000);
});

describe('the conformance page bundled with an app', () => {
  it('runs from file:// (as an app’s assets) and reports to a sandbox on another origin', async () => {
    // generated/bridge-conformance/ loaded from disk, as a web view loads an app's bundled assets,
    // reporting across origins to the sandbox: the guide's "Bundled with your app".
    const run = 'chromium-bundled';
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
    const query = new URLSearchParams({ run, report: `${sandbox.miniappUrl}/sandbox/bridge-runs/` });
    await page.goto(`${pathToFileURL(path.join(repoRoot, 'generated', 'bridge-conformance', 'index.html')).href}?${query}`);
    // No parent frame and no native handler here: the page says so, and reports that it stopped.
    await page.locator('#report-status', { hasText: 'Report sent' }).waitFor({ timeout: RUN_MS });
    expect(await page.locator('#status').textContent()).toMatch(/not inside a host app/);
    const report = await storedReport(run);
    expect(report).toMatchObject({ run, finished: true, passed: false, page: { transport: 'none' } });
    expect(report.stopped).toMatch(/not inside a host app/);
    await page.close();
    expect(errors).toEqual([]);
  }, 120_000);
});

describe('the conformance page inside the host-app simulator', () => {
  it('passes every check, with the simulator buttons pressed when the page asks a person', async () => {
    const run = 'chromium-simulator';
    const simulator = `${sandbox.hostappUrl}/simulator/?${new URLSearchParams({ miniapp: conformanceUrl(run) })}`;
    const { page, errors } = await open(simulator);
    const frame = await conformanceFrame(page);
    const button = { success: '#pay-confirm', cancelled: '#pay-cancel', failed: '#pay-fail' } as Record<string, string>;
    let acted = 0;
    // Bounded: the vectors hold a handful of prompts; each is acted on once.
    for (let step = 1; step <= 20; step++) {
      const next = frame.locator(`#prompt[data-step="${step}"]:not([hidden]), #result[data-passed]`).first();
      await next.waitFor({ timeout: RUN_MS });
      if ((await next.getAttribute('id')) === 'result') break;
      const kind = await next.getAttribute('data-for');
      if (kind === 'finish-payment') {
        await page.locator('#pay-sheet').waitFor({ state: 'visible', timeout: RUN_MS });
        expect(await page.locator('#pay-order-payment').textContent()).toBe(await next.getAttribute('data-order-payment-id'));
        const status = /press (Confirm|Cancel|Fail)/.exec((await next.textContent()) ?? '')?.[1];
        await page.locator(button[{ Confirm: 'success', Cancel: 'cancelled', Fail: 'failed' }[status ?? 'Confirm']!]!).click();
      } else {
        await page.locator('#emit-form button').click();
      }
      acted += 1;
    }
    expect(await finished(frame)).toBe(true);
    expect(acted).toBe(5); // four payment sheets and one event to send
    const report = await storedReport(run);
    expect(report.checks.filter((check) => check.outcome !== 'pass')).toEqual([]);
    // The simulator logs the page's custom events, the waiting prompts included.
    expect(await page.locator('#log').textContent()).toContain(`custom event ${WAITING_EVENT_TYPE} (send)`);
    await page.close();
    expect(errors).toEqual([]);
  }, 150_000);
});
