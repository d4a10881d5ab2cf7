/**
 * npm run docs:screenshots:simulator: runs the demo miniapp in the host-app simulator (platform,
 * sandbox and demo server in process), buys a product, and saves the payment sheet and the
 * result page to docs/screenshots/ (simulator-pay-sheet.png, simulator-result.png).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startDemoStack } from '../examples/demo-miniapp/stack.js';
import { launchChromium } from './lib/docs-browser.js';
import { screenshotsDir } from './lib/paths.js';

const STEP_MS = 30_000;

const browser = await launchChromium();
const stack = await startDemoStack();
try {
  await mkdir(screenshotsDir, { recursive: true });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  await page.goto(stack.simulatorUrl);
  const miniapp = page.frameLocator('#miniapp');
  await miniapp.locator('button[data-sku="coffee-1kg"]').click({ timeout: STEP_MS });
  await page.locator('#pay-sheet').waitFor({ state: 'visible', timeout: STEP_MS });
  const sheet = path.join(screenshotsDir, 'simulator-pay-sheet.png');
  await page.screenshot({ path: sheet });
  await page.locator('#pay-confirm').click();
  await miniapp.locator('#result-payment-status[data-status="paid"]').waitFor({ timeout: STEP_MS });
  await miniapp.locator('#result-e6', { hasText: 'yes' }).waitFor({ timeout: STEP_MS });
  const result = path.join(screenshotsDir, 'simulator-result.png');
  await page.screenshot({ path: result });
  for (const file of [sheet, result]) console.log(`✔ ${path.relative(process.cwd(), file)}`);
  if (problems.length > 0) {
    for (const problem of problems) console.error(`  ${problem}`);
    process.exitCode = 1;
  }
} finally {
  await browser.close();
  await stack.close();
}
