/**
 * npm run docs:screenshots:dashboard: runs the sandbox (platform on PGlite in memory, sandbox
 * host app and miniapp in process), pays one order so the miniapp has an E6 delivery, signs in to
 * the dashboard at /dashboard/ as the sandbox miniapp and saves each part of it to
 * docs/screenshots/: dashboard-settings.png (with the contract's message for a bad URL),
 * dashboard-rotation.png (a new secret shown once), dashboard-deliveries.png (after a redelivery) and
 * dashboard-audit.png.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { registryFrom } from '../src/platform/registry/loadRegistry.js';
import { startPlatform } from '../src/platform/server.js';
import { basicAuthorization } from '../src/wire/authorization.js';
import { SANDBOX_ADMIN_TOKEN, SANDBOX_HOSTAPP, SANDBOX_MINIAPP, startSandbox } from '../src/tools/sandbox/startSandbox.js';
import { launchChromium } from './lib/docs-browser.js';
import { screenshotsDir } from './lib/paths.js';

const STEP_MS = 30_000;

let platformUrl = '';
const sandbox = await startSandbox({ platformUrl: () => platformUrl, hostappPort: 0, miniappPort: 0 });
const platform = await startPlatform({
  registry: registryFrom(sandbox.registry),
  config: { port: 0, host: '127.0.0.1', dataDir: 'memory://', databaseUrl: undefined, logLevel: 'silent', adminToken: SANDBOX_ADMIN_TOKEN },
});
platformUrl = platform.url;
const browser = await launchChromium();
const saved: string[] = [];
try {
  await mkdir(screenshotsDir, { recursive: true });
  // One paid order: E1 from the miniapp, the user confirms at the sandbox host app (E5), E6 follows.
  const created = await fetch(`${platform.url}/api/v1/orders/create-order-payment/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basicAuthorization(SANDBOX_MINIAPP.appId, SANDBOX_MINIAPP.secretKey) },
    body: JSON.stringify({
      app_id: SANDBOX_MINIAPP.appId,
      client_id: SANDBOX_HOSTAPP.clientId,
      order: { currency: 'VND', amount: '125000', miniapp_order_id: 'ORD-1001' },
    }),
  });
  const { order_payment_id: orderPaymentId } = (await created.json()) as { order_payment_id: string };
  const confirmed = await fetch(`${sandbox.hostappUrl}/sandbox/payments/${encodeURIComponent(orderPaymentId)}/confirm`, { method: 'POST' });
  if (!confirmed.ok) throw new Error(`the sandbox did not confirm ${orderPaymentId}: HTTP ${confirmed.status}`);

  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  const shot = async (name: string) => {
    const file = path.join(screenshotsDir, name);
    await page.screenshot({ path: file, fullPage: true });
    saved.push(file);
  };

  await page.goto(`${platform.url}/dashboard/`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: STEP_MS });
  await page.getByLabel('Partner id').fill(SANDBOX_MINIAPP.appId);
  await page.getByLabel('Secret', { exact: true }).fill(SANDBOX_MINIAPP.secretKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#app').waitFor({ state: 'visible', timeout: STEP_MS });

  await page.getByLabel('complete_order', { exact: true }).fill('ftp://miniapp.example/complete-order');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.locator('.field-error[data-error-for="urls.complete_order"]').waitFor({ state: 'visible', timeout: STEP_MS });
  await shot('dashboard-settings.png');

  await page.getByRole('tab', { name: 'Credentials' }).click();
  await page.getByLabel('Kind').selectOption('secret_key');
  await page.getByRole('button', { name: 'Issue a new secret' }).click();
  await page.locator('#new-secret').waitFor({ state: 'visible', timeout: STEP_MS });
  await page.locator('#credentials-table tbody tr', { hasText: 'active' }).nth(1).waitFor({ timeout: STEP_MS });
  await shot('dashboard-rotation.png');

  await page.getByRole('tab', { name: 'E6 deliveries' }).click();
  const delivery = page.locator('#deliveries-table tbody tr', { hasText: orderPaymentId });
  await delivery.locator('td[data-field="status"]', { hasText: 'delivered' }).waitFor({ timeout: STEP_MS });
  await delivery.getByRole('button', { name: /^Redeliver / }).click();
  await page.locator('#deliveries-ok').waitFor({ state: 'visible', timeout: STEP_MS });
  // The click scrolled a wide table to its button; the picture starts at the table's left edge.
  await page.locator('#panel-deliveries').evaluate((panel) => panel.scrollTo(0, 0));
  await shot('dashboard-deliveries.png');

  await page.getByRole('tab', { name: 'Audit log' }).click();
  await page.locator('#audit-table tbody tr', { hasText: 'issue_credential' }).waitFor({ timeout: STEP_MS });
  await shot('dashboard-audit.png');

  for (const file of saved) console.log(`✔ ${path.relative(process.cwd(), file)}`);
  if (problems.length > 0) {
    for (const problem of problems) console.error(`  ${problem}`);
    process.exitCode = 1;
  }
} finally {
  await browser.close();
  await platform.close();
  await sandbox.close();
}
