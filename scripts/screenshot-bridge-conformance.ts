/**
 * npm run docs:screenshots:bridge: runs the bridge conformance page inside the host-app simulator
 * (the sandbox in process), presses the simulator's buttons when the page asks, and saves the page
 * waiting for the payment sheet and the finished table to docs/screenshots/
 * (bridge-conformance-prompt.png, bridge-conformance-result.png).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startSandbox } from '../src/tools/sandbox/startSandbox.js';
import { launchChromium } from './lib/docs-browser.js';
import { screenshotsDir } from './lib/paths.js';

const STEP_MS = 30_000;
/** The vectors hold a handful of prompts on the iframe transport. */
const MAX_PROMPTS = 20;

const browser = await launchChromium();
const sandbox = await startSandbox({ platformUrl: 'http://127.0.0.1:9', hostappPort: 0, miniappPort: 0 });
try {
  await mkdir(screenshotsDir, { recursive: true });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${sandbox.hostappUrl}/simulator/?${new URLSearchParams({ miniapp: `${sandbox.bridgeConformanceUrl}?run=screenshot` })}`);
  const frame = page.frameLocator('#miniapp');
  const prompt = path.join(screenshotsDir, 'bridge-conformance-prompt.png');
  for (let step = 1; step <= MAX_PROMPTS; step++) {
    const next = frame.locator(`#prompt[data-step="${step}"]:not([hidden]), #result[data-passed]`).first();
    await next.waitFor({ timeout: STEP_MS });
    if ((await next.getAttribute('id')) === 'result') break;
    if ((await next.getAttribute('data-for')) === 'finish-payment') {
      await page.locator('#pay-sheet').waitFor({ state: 'visible', timeout: STEP_MS });
      if (step === 1) await page.screenshot({ path: prompt });
      await page.locator('#pay-confirm').click();
    } else {
      await page.locator('#emit-form button').click();
    }
  }
  await frame.locator('#result[data-passed]').waitFor({ timeout: STEP_MS });
  const result = path.join(screenshotsDir, 'bridge-conformance-result.png');
  await page.screenshot({ path: result });
  for (const file of [prompt, result]) console.log(`✔ ${path.relative(process.cwd(), file)}`);
} finally {
  await browser.close();
  await sandbox.close();
}
