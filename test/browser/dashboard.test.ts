import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../scripts/lib/docs-browser.js';
import { basicAuthorization } from '../../src/wire/authorization.js';
import { statementDayRule } from '../../src/contract/records.js';
import { createStore } from '../../src/platform/store/index.js';
import type { Received } from '../support/fakePartners.js';
import { ADMIN_TOKEN, e1Body, HOSTAPP, MINIAPP, PlatformHarness } from '../support/platformHarness.js';

/** Where the settings test moves the miniapp's E6 URL: a public name, as a partner must register. */
const MOVED_URL = 'https://miniapp.example/complete-order-moved';

// The partner dashboard served at /dashboard/, driven in Debian's Chromium: a miniapp signs in
// with its own credentials, changes a URL, sees the contract's message for a bad one, rotates and
// revokes its secret, redelivers an E6 callback and reads its audit log; and sees nothing of
// another partner. What the page shows is checked against what the Dashboard API answers.
// Chromium is required: without it these tests fail (`npm test` installs it when missing: ADR 0044).

const STEP_MS = 30_000;
const OTHER = { id: 'ma_other', secret: 'other-miniapp-secret-1' };
/** The miniapp whose secret the rotation test revokes: every other test signs in as MINIAPP with its own secret. */
const ROTATING = { id: 'ma_rotating', secret: 'rotating-miniapp-secret-1' };

const harness = new PlatformHarness();
let browser: Browser;
let page: Page;
let pageErrors: string[];
let counter = 0;

function hostappE3(_request: Received, res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_dash_${++counter}` }));
}

beforeAll(async () => {
  harness.hostapp.on('/create-order-payment', hostappE3);
  harness.miniapp.on('/complete-order', { code: 'SUCCESS' }).on('/complete-order-moved', { code: 'SUCCESS' });
  await harness.start({
    registry: (registry) => {
      registry.miniapps.push({
        app_id: OTHER.id,
        secret_key: OTHER.secret,
        hostapps: [HOSTAPP.id],
        features: { payments: true, event_bridge: false, event_receiver: false },
        urls: { complete_order: 'https://other.example/secret-callback' },
      });
      registry.miniapps.push({
        app_id: ROTATING.id,
        secret_key: ROTATING.secret,
        hostapps: [HOSTAPP.id],
        features: { payments: true, event_bridge: false, event_receiver: false },
      });
    },
  });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await harness.stop();
});

beforeEach(async () => {
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    // A refused sign-in or save is an answer the page shows, not a page error.
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) pageErrors.push(message.text());
  });
  // Nothing may leave the machine: the dashboard uses no external resources.
  await page.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => {
    pageErrors.push(`external request: ${route.request().url()}`);
    return route.abort('internetdisconnected');
  });
});

afterEach(async () => {
  await page?.close();
  expect(pageErrors).toEqual([]);
});

async function signIn(id: string, secret: string, as: 'a miniapp' | 'a host app' = 'a miniapp'): Promise<void> {
  await page.goto(`${harness.running.url}/dashboard/`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: STEP_MS });
  await page.getByLabel(as, { exact: true }).check();
  await page.getByLabel('Partner id').fill(id);
  await page.getByLabel('Secret', { exact: true }).fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#app').waitFor({ state: 'visible', timeout: STEP_MS });
}

async function openTab(name: string): Promise<void> {
  await page.getByRole('tab', { name }).click();
  await page.getByRole('tabpanel', { name }).waitFor({ state: 'visible', timeout: STEP_MS });
}

function field(name: string) {
  return page.getByLabel(name, { exact: true });
}

/** A paid payment of MINIAPP whose E6 the miniapp server has acknowledged; its order_payment_id. */
async function deliveredPayment(): Promise<string> {
  const created = await harness.call('createOrderPayment', e1Body(), { authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret) });
  expect(created.status).toBe(200);
  const orderPaymentId: string = created.body.order_payment_id;
  const completion = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: orderPaymentId, payment_status: 'paid' };
  expect((await harness.call('completeOrder', completion, { authorization: harness.hostappBasic() })).body.code).toBe('SUCCESS');
  await harness.eventually('E6', () =>
    harness.miniapp.received.find((r) => r.path.startsWith('/complete-order') && r.body.includes(orderPaymentId)),
  );
  return orderPaymentId;
}

async function getMiniapp(id: string, secret: string) {
  return harness.call('getMiniapp', undefined, {
    authorization: basicAuthorization(id, secret),
    path: `/api/v1/dashboard/miniapps/${encodeURIComponent(id)}`,
  });
}

describe('serving', () => {
  it('/dashboard redirects to /dashboard/, served with a strict CSP and no framing; an unknown file is a contract 404', async () => {
    const bare = await fetch(`${harness.running.url}/dashboard`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/dashboard/');
    const index = await fetch(`${harness.running.url}/dashboard/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(index.headers.get('x-frame-options')).toBe('DENY');
    const missing = await fetch(`${harness.running.url}/dashboard/nothing-here.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error_code: 'NOT_FOUND' });
  });
});

describe('signing in', () => {
  it('wrong credentials: the contract’s message is shown and nothing of the partner', async () => {
    await page.goto(`${harness.running.url}/dashboard/`);
    await page.locator('body[data-ready="true"]').waitFor({ timeout: STEP_MS });
    await page.getByLabel('Partner id').fill(MINIAPP.id);
    await page.getByLabel('Secret', { exact: true }).fill('not-the-secret');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.locator('#sign-in-form .form-error');
    await alert.waitFor({ state: 'visible', timeout: STEP_MS });
    const answer = await harness.call('getMiniapp', undefined, {
      authorization: basicAuthorization(MINIAPP.id, 'not-the-secret'),
      path: `/api/v1/dashboard/miniapps/${MINIAPP.id}`,
    });
    expect(answer.status).toBe(401);
    expect(await alert.textContent()).toBe(`${answer.body.error_message} (${answer.body.error_code})`);
    expect(await page.locator('#app').isHidden()).toBe(true);
    // The secret typed is not kept in the form once the attempt is over.
    expect(await page.getByLabel('Secret', { exact: true }).inputValue()).toBe('');
  }, 90_000);

  it('the page keeps no credential in storage or cookies: a reload signs out', async () => {
    await signIn(MINIAPP.id, MINIAPP.secret);
    const stored = await page.evaluate(
      '({ local: JSON.stringify({ ...localStorage }), session: JSON.stringify({ ...sessionStorage }), cookie: document.cookie })',
    );
    expect(stored).toEqual({ local: '{}', session: '{}', cookie: '' });
    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor({ timeout: STEP_MS });
    expect(await page.locator('#sign-in').isVisible()).toBe(true);
    expect(await page.locator('#app').isHidden()).toBe(true);
  }, 90_000);
});

describe('signing in without a console error', () => {
  it('a miniapp and a host app sign in with no console message at all; /favicon.ico is served', async () => {
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') consoleErrors.push(message.text());
    });
    const failed: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    await signIn(MINIAPP.id, MINIAPP.secret, 'a miniapp');
    expect(await page.locator('#who').textContent()).toBe(`Signed in as miniapp ${MINIAPP.id}`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(HOSTAPP.id, HOSTAPP.secret, 'a host app');
    expect(await page.locator('#who').textContent()).toBe(`Signed in as host app ${HOSTAPP.id}`);
    expect(await page.locator('#identity dd[data-field="client_id"]').textContent()).toBe(HOSTAPP.id);
    expect(consoleErrors).toEqual([]);
    expect(failed).toEqual([]);

    const icon = await fetch(`${harness.running.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    const bytes = Buffer.from(await icon.arrayBuffer());
    // An ICO header: reserved 0, type 1 (icon), one image.
    expect([...bytes.subarray(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
  }, 90_000);
});

describe('settings', () => {
  it('a changed URL is saved, shown after a reload and used by the API', async () => {
    await signIn(MINIAPP.id, MINIAPP.secret);
    expect(await page.locator('#identity dd[data-field="app_id"]').textContent()).toBe(MINIAPP.id);
    // A public address: a partner may not point the platform at loopback or private ones (SSRF).
    const moved = MOVED_URL;
    await field('complete_order').fill(moved);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('#settings-form .form-ok', { hasText: 'Saved.' }).waitFor({ timeout: STEP_MS });
    expect((await getMiniapp(MINIAPP.id, MINIAPP.secret)).body.urls.complete_order).toBe(moved);

    await page.reload();
    await signIn(MINIAPP.id, MINIAPP.secret);
    expect(await field('complete_order').inputValue()).toBe(moved);

    // Back to the test's miniapp server on loopback, which only an operator may register.
    const restored = await harness.call(
      'updateMiniapp',
      { urls: { complete_order: `${harness.miniapp.url}/complete-order` } },
      { authorization: `Bearer ${ADMIN_TOKEN}`, path: `/api/v1/dashboard/miniapps/${MINIAPP.id}` },
    );
    expect(restored.status).toBe(200);
  }, 90_000);

  it('an invalid URL: the contract’s error_message is shown next to the field and nothing changes', async () => {
    await signIn(MINIAPP.id, MINIAPP.secret);
    const before = (await getMiniapp(MINIAPP.id, MINIAPP.secret)).body;
    await field('complete_order').fill('ftp://not-a-callback.example/');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const error = page.locator('.field-error[data-error-for="urls.complete_order"]');
    await error.waitFor({ state: 'visible', timeout: STEP_MS });
    // The same change straight to the API: the page shows its message word for word.
    const answer = await harness.call(
      'updateMiniapp',
      { urls: { complete_order: 'ftp://not-a-callback.example/' } },
      { authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret), path: `/api/v1/dashboard/miniapps/${MINIAPP.id}` },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error_message).toMatch(/^urls\.complete_order\b/);
    expect(await error.textContent()).toBe(`${answer.body.error_message} (${answer.body.error_code})`);
    expect(await field('complete_order').getAttribute('aria-invalid')).toBe('true');
    expect((await getMiniapp(MINIAPP.id, MINIAPP.secret)).body.urls).toEqual(before.urls);
  }, 90_000);
});

describe('credentials', () => {
  it('rotate: the new secret is shown once; old and new both work during the overlap; revoking the old refuses it', async () => {
    await signIn(ROTATING.id, ROTATING.secret);
    await openTab('Credentials');
    const before = await harness.call('listCredentials', undefined, {
      authorization: basicAuthorization(ROTATING.id, ROTATING.secret),
      path: `/api/v1/dashboard/miniapps/${ROTATING.id}/credentials`,
    });
    expect(before.status).toBe(200);
    const oldIds = new Set<string>(
      before.body.credentials.filter((c: any) => c.kind === 'secret_key' && c.status === 'active').map((c: any) => c.credential_id),
    );
    expect(oldIds.size).toBe(1);

    await page.getByLabel('Kind').selectOption('secret_key');
    await page.getByRole('button', { name: 'Issue a new secret' }).click();
    const shown = page.locator('#new-secret');
    await shown.waitFor({ state: 'visible', timeout: STEP_MS });
    expect(await shown.textContent()).toContain('only time the secret is shown');
    const secret = await page.locator('#new-secret-value').inputValue();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    const oldSecret = ROTATING.secret;

    // The overlap: both secrets work.
    expect((await getMiniapp(ROTATING.id, oldSecret)).status).toBe(200);
    expect((await getMiniapp(ROTATING.id, secret)).status).toBe(200);

    // The list shows two active secret keys; the secret appears nowhere but in the one-time box.
    const rows = page.locator('#credentials-table tbody tr', { hasText: 'secret_key' });
    await expect.poll(() => rows.filter({ hasText: 'active' }).count(), { timeout: STEP_MS }).toBe(2);
    expect(await page.locator('#credentials-table').textContent()).not.toContain(secret);

    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await shown.isHidden()).toBe(true);
    expect(await page.locator('#new-secret-value').inputValue()).toBe('');

    const [oldId] = [...oldIds];
    await page.getByRole('button', { name: `Revoke secret_key ${oldId}` }).click();
    await page.locator('#credentials-table tbody tr', { hasText: oldId }).filter({ hasText: 'revoked' }).waitFor({ timeout: STEP_MS });
    // The dashboard now signs in with the new secret: it keeps working after the revocation.
    expect(await page.locator('#credentials-error').isHidden()).toBe(true);
    expect((await getMiniapp(ROTATING.id, oldSecret)).status).toBe(401);
    expect((await getMiniapp(ROTATING.id, secret)).status).toBe(200);
    // The miniapp's E1 with the new secret works too.
    const e1 = await harness.call(
      'createOrderPayment',
      { ...e1Body(), app_id: ROTATING.id },
      { authorization: basicAuthorization(ROTATING.id, secret) },
    );
    expect(e1.status).toBe(200);
  }, 90_000);
});

describe('E6 deliveries', () => {
  it('a delivery is listed and redelivered: the miniapp server gets the same event again', async () => {
    const created = await harness.call('createOrderPayment', e1Body(), { authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret) });
    expect(created.status).toBe(200);
    const orderPaymentId: string = created.body.order_payment_id;
    const completion = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: orderPaymentId, payment_status: 'paid' };
    expect((await harness.call('completeOrder', completion, { authorization: harness.hostappBasic() })).body.code).toBe('SUCCESS');
    const callbacks = () => harness.miniapp.received.filter((r) => r.path.startsWith('/complete-order') && r.body.includes(orderPaymentId));
    const first = await harness.eventually('E6', () => callbacks()[0]);

    await signIn(MINIAPP.id, MINIAPP.secret);
    await openTab('E6 deliveries');
    const row = page.locator('#deliveries-table tbody tr', { hasText: orderPaymentId });
    await expect.poll(() => row.locator('td[data-field="status"]').textContent(), { timeout: STEP_MS }).toBe('delivered');
    await row.getByRole('button', { name: /^Redeliver / }).click();
    await page.locator('#deliveries-ok').waitFor({ state: 'visible', timeout: STEP_MS });
    const again = await harness.eventually('E6 again', () => callbacks()[1], STEP_MS);
    expect(again.headers['x-minibridge-event-id']).toBe(first.headers['x-minibridge-event-id']);
  }, 90_000);
});

describe('E6 deliveries at 1280 px, by payment, followed after Redeliver', () => {
  it('at 1280×800 the Redeliver column is in the viewport without scrolling sideways', async () => {
    const orderPaymentId = await deliveredPayment();
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(MINIAPP.id, MINIAPP.secret);
    await openTab('E6 deliveries');
    const row = page.locator('#deliveries-table tbody tr', { hasText: orderPaymentId });
    const button = row.getByRole('button', { name: /^Redeliver / });
    await button.waitFor({ timeout: STEP_MS });
    const header = page.locator('#deliveries-table thead th', { hasText: 'action' });
    for (const element of [button, header]) {
      const box = await element.boundingBox();
      expect(box).not.toBeNull();
      // Vertical scrolling only: the page's and the panel's horizontal scroll stay at 0.
      const scrolledY = Number(await page.evaluate('window.scrollY'));
      await page.evaluate(`window.scrollTo(0, ${Math.max(0, Math.round(box!.y + scrolledY - 200))})`);
      const seen = (await element.boundingBox())!;
      expect(seen.x).toBeGreaterThanOrEqual(0);
      expect(seen.x + seen.width).toBeLessThanOrEqual(1280);
      expect(seen.y).toBeGreaterThanOrEqual(0);
      expect(seen.y + seen.height).toBeLessThanOrEqual(800);
      // Nothing covers it: the element at its centre is it (or inside it).
      const onTop = await element.evaluate(
        (node, point) => {
          const hit = node.ownerDocument.elementFromPoint(point.x, point.y);
          return hit !== null && (hit === node || node.contains(hit));
        },
        { x: seen.x + seen.width / 2, y: seen.y + seen.height / 2 },
      );
      expect(onTop).toBe(true);
    }
    expect(await page.evaluate('window.scrollX')).toBe(0);
    expect(await page.locator('#panel-deliveries').evaluate((panel) => panel.scrollLeft)).toBe(0);
  }, 90_000);

  it('filters by order_payment_id: only that payment’s deliveries are listed', async () => {
    const one = await deliveredPayment();
    const other = await deliveredPayment();
    await signIn(MINIAPP.id, MINIAPP.secret);
    await openTab('E6 deliveries');
    await page.locator('#deliveries-table tbody tr', { hasText: other }).waitFor({ timeout: STEP_MS });
    await page.locator('#deliveries-filter').getByLabel('order_payment_id', { exact: true }).fill(one);
    await page.locator('#deliveries-filter').getByRole('button', { name: 'Show' }).click();
    await expect
      .poll(async () => page.locator('#deliveries-table tbody td[data-field="order_payment_id"]').allTextContents(), { timeout: STEP_MS })
      .toEqual([one]);
    // The page asks what the API answers for the same filter.
    const api = await harness.call('listPartnerDeliveries', undefined, {
      authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret),
      path: `/api/v1/dashboard/miniapps/${MINIAPP.id}/deliveries?order_payment_id=${encodeURIComponent(one)}`,
    });
    expect(api.status).toBe(200);
    expect(api.body.deliveries.map((d: { order_payment_id: string }) => d.order_payment_id)).toEqual([one]);
  }, 90_000);

  it('after Redeliver the row shows the attempt’s outcome without Refresh', async () => {
    const orderPaymentId = await deliveredPayment();
    await signIn(MINIAPP.id, MINIAPP.secret);
    await openTab('E6 deliveries');
    const row = page.locator('#deliveries-table tbody tr', { hasText: orderPaymentId });
    await expect.poll(() => row.locator('td[data-field="status"]').textContent(), { timeout: STEP_MS }).toBe('delivered');
    const before = Number(await row.locator('td[data-field="attempts_made"]').textContent());
    // Counts the list reads: the row must change without the table being reloaded by hand.
    let refreshed = 0;
    await page
      .locator('#deliveries-refresh')
      .evaluate((button) => button.addEventListener('click', () => button.setAttribute('data-clicked', 'yes')));
    page.on('request', (request) => {
      if (request.url().includes('/deliveries?') && !request.url().includes('order_payment_id=')) refreshed += 1;
    });
    await row.getByRole('button', { name: /^Redeliver / }).click();
    await expect
      .poll(
        async () => [
          await row.locator('td[data-field="status"]').textContent(),
          Number(await row.locator('td[data-field="attempts_made"]').textContent()),
        ],
        {
          timeout: STEP_MS,
        },
      )
      .toEqual(['delivered', before + 1]);
    expect(refreshed).toBe(0);
    expect(await page.locator('#deliveries-refresh').getAttribute('data-clicked')).toBeNull();
  }, 90_000);
});

describe('payments', () => {
  it('lists the partner’s payments, filters the stuck ones, and opens a payment’s timeline', async () => {
    const auth = { authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret) };
    const paid = await harness.call('createOrderPayment', e1Body({ amount: '12345678901234567.89' }), auth);
    const waiting = await harness.call('createOrderPayment', e1Body(), auth);
    const paidId: string = paid.body.order_payment_id;
    const stuckId: string = waiting.body.order_payment_id;
    const completion = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: paidId, payment_status: 'paid' };
    expect((await harness.call('completeOrder', completion, { authorization: harness.hostappBasic() })).status).toBe(200);
    // A payment past its expiry that the host app still calls in process, as reconciliation leaves it.
    await harness.running.platform.store.db.query(
      "UPDATE order_payments SET expires_at = now() - interval '1 hour', stuck_since = now() WHERE order_payment_id = $1",
      [stuckId],
    );

    await signIn(MINIAPP.id, MINIAPP.secret);
    await openTab('Payments');
    const paidRow = page.locator('#payments-table tbody tr', { hasText: paidId });
    await expect.poll(() => paidRow.locator('td[data-field="payment_status"]').textContent(), { timeout: STEP_MS }).toBe('paid');
    // Every digit of the amount, as E1 sent it.
    expect(await paidRow.locator('td[data-field="amount"]').textContent()).toBe('12345678901234567.89');
    expect(await paidRow.locator('td[data-field="settled_by"]').textContent()).toBe('E5');

    await page.getByLabel('stuck only').check();
    await page.locator('#payments-filter').getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => page.locator('#payments-table tbody tr').count(), { timeout: STEP_MS }).toBe(1);
    const stuckRow = page.locator('#payments-table tbody tr', { hasText: stuckId });
    expect(await stuckRow.locator('td[data-field="stuck"]').textContent()).toBe('true');

    await page.getByLabel('stuck only').uncheck();
    await page.locator('#payments-filter').getByLabel('order_payment_id').fill(paidId);
    await page.locator('#payments-filter').getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => page.locator('#payments-table tbody tr').count(), { timeout: STEP_MS }).toBe(1);
    await page.getByRole('button', { name: `Open ${paidId}` }).click();
    await page.locator('#payment-detail').waitFor({ state: 'visible', timeout: STEP_MS });
    const timeline = page.locator('#payment-timeline');
    await expect.poll(() => timeline.locator('li[data-kind="E1"]').count(), { timeout: STEP_MS }).toBe(1);
    expect(await timeline.locator('li[data-kind="E5"]').textContent()).toContain('paid: reported by the host app (E5)');
    await expect.poll(() => timeline.locator('li[data-kind="delivery"]').count(), { timeout: STEP_MS }).toBe(1);
    expect(await page.locator('#payment-facts dd[data-field="amount"]').textContent()).toBe('12345678901234567.89');
    // At the width the dashboard is used at, the Open column is on screen.
    const open = page.getByRole('button', { name: `Open ${paidId}` });
    const box = await open.boundingBox();
    expect(box && box.x + box.width).toBeLessThanOrEqual(1280);
  }, 90_000);

  it('a partner opens only its own payments: another miniapp’s is not found, and none is listed', async () => {
    const created = await harness.call('createOrderPayment', e1Body(), { authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret) });
    const id: string = created.body.order_payment_id;
    const asOther = { authorization: basicAuthorization(OTHER.id, OTHER.secret) };
    const listed = await harness.call('listPartnerPayments', undefined, {
      ...asOther,
      path: `/api/v1/dashboard/miniapps/${OTHER.id}/payments`,
    });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(id);
    const opened = await harness.call('getPartnerPayment', undefined, {
      ...asOther,
      path: `/api/v1/dashboard/miniapps/${OTHER.id}/payments/${HOSTAPP.id}/${id}`,
    });
    expect(opened.status).toBe(404);
    const theirs = await harness.call('listPartnerPayments', undefined, {
      ...asOther,
      path: `/api/v1/dashboard/miniapps/${MINIAPP.id}/payments`,
    });
    expect(theirs.status).toBe(404);
    const everything = await harness.call('listPayments', undefined, { ...asOther, path: '/api/v1/dashboard/payments' });
    expect(everything.status).toBe(401);
    // The host app sees it; the operator sees it in the list of every partner's payments.
    const hostapp = await harness.call('getPartnerPayment', undefined, {
      authorization: basicAuthorization(HOSTAPP.id, HOSTAPP.secret),
      path: `/api/v1/dashboard/hostapps/${HOSTAPP.id}/payments/${HOSTAPP.id}/${id}`,
    });
    expect(hostapp.body).toMatchObject({ order_payment_id: id, app_id: MINIAPP.id, payment_status: 'in_process', stuck: false });
    const operator = await harness.call('listPayments', undefined, {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      path: `/api/v1/dashboard/payments?order_payment_id=${encodeURIComponent(id)}`,
    });
    expect(operator.body.payments.map((p: { order_payment_id: string }) => p.order_payment_id)).toEqual([id]);
  });
});

describe('statements', () => {
  it('shows a closed day with its exact totals and downloads it as CSV, every digit kept, formula cells neutralised', async () => {
    const auth = { authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret) };
    const paid = await harness.call('createOrderPayment', e1Body({ amount: '99999999999999999.99', miniapp_order_id: '=cmd|calc' }), auth);
    const paidId: string = paid.body.order_payment_id;
    const completion = { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: paidId, payment_status: 'paid' };
    expect((await harness.call('completeOrder', completion, { authorization: harness.hostappBasic() })).status).toBe(200);
    const [{ day }] = (await harness.running.platform.store.db.query<{ day: string }>(
      `SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM payment_status_history WHERE order_payment_id = $1 AND to_status = 'paid'`,
      [paidId],
    )) as [{ day: string }];
    // The day closes with a clock set by hand to its close.
    const closer = createStore(harness.running.platform.store.db, {
      clock: () => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000 + statementDayRule().closesAfterMs),
    });
    while (await closer.statements.closeNextDay());

    await signIn(MINIAPP.id, MINIAPP.secret);
    await openTab('Statements');
    await field('Day (UTC)').fill(day);
    await page.locator('#statements-form').getByRole('button', { name: 'Show' }).click();
    const line = page.locator('#statements-lines tbody tr', { hasText: paidId });
    await expect.poll(() => line.locator('td[data-field="amount"]').textContent(), { timeout: STEP_MS }).toBe('99999999999999999.99');
    expect(await page.locator('#statements-totals tbody tr', { hasText: 'paid' }).locator('td[data-field="amount"]').count()).toBe(1);

    const [file] = await Promise.all([
      page.waitForEvent('download', { timeout: STEP_MS }),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(file.suggestedFilename()).toBe(`statement-${MINIAPP.id}-${day}.csv`);
    const text = await readFile((await file.path())!, 'utf8');
    const records = parse(text, { columns: true }) as Record<string, string>[];
    const row = records.find((record) => record.order_payment_id === paidId)!;
    expect(row).toMatchObject({
      record: 'payment',
      amount: '99999999999999999.99',
      miniapp_order_id: "'=cmd|calc",
      payment_status: 'paid',
    });
    const api = await harness.call('getPartnerStatement', undefined, {
      ...auth,
      path: `/api/v1/dashboard/miniapps/${MINIAPP.id}/statements/${day}`,
    });
    expect(records.filter((record) => record.record === 'total').map((total) => total.amount)).toEqual(
      api.body.totals.map((total: { amount: string }) => total.amount),
    );
  }, 90_000);

  it('an open day is refused with the contract’s message', async () => {
    await signIn(MINIAPP.id, MINIAPP.secret);
    await openTab('Statements');
    await field('Day (UTC)').fill(new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10));
    await page.locator('#statements-form').getByRole('button', { name: 'Show' }).click();
    await expect
      .poll(() => page.locator('#statements-error').textContent(), { timeout: STEP_MS })
      .toMatch(/closes at 01:00 UTC.*NOT_FOUND/);
  }, 90_000);
});

describe('audit log', () => {
  it('lists the changes made through the dashboard, never a secret', async () => {
    // The changes it lists, made here: a URL moved, and a secret issued and then revoked.
    const auth = basicAuthorization(MINIAPP.id, MINIAPP.secret);
    const miniappPath = `/api/v1/dashboard/miniapps/${MINIAPP.id}`;
    expect(
      (await harness.call('updateMiniapp', { urls: { complete_order: MOVED_URL } }, { authorization: auth, path: miniappPath })).status,
    ).toBe(200);
    const restored = await harness.call(
      'updateMiniapp',
      { urls: { complete_order: `${harness.miniapp.url}/complete-order` } },
      { authorization: `Bearer ${ADMIN_TOKEN}`, path: miniappPath },
    );
    expect(restored.status).toBe(200);
    const issued = await harness.call(
      'issueCredential',
      { kind: 'secret_key' },
      { authorization: auth, path: `${miniappPath}/credentials` },
    );
    expect(issued.status).toBe(201);
    const revoked = await harness.call('revokeCredential', undefined, {
      authorization: auth,
      path: `${miniappPath}/credentials/${issued.body.credential_id}/revoke`,
    });
    expect(revoked.body.status).toBe('revoked');

    await signIn(MINIAPP.id, MINIAPP.secret);
    await openTab('Audit log');
    const table = page.locator('#audit-table');
    await table.locator('tbody tr', { hasText: 'urls.complete_order' }).first().waitFor({ timeout: STEP_MS });
    await table.locator('tbody tr', { hasText: 'issue_credential' }).first().waitFor({ timeout: STEP_MS });
    await table.locator('tbody tr', { hasText: 'revoke_credential' }).first().waitFor({ timeout: STEP_MS });
    const text = (await table.textContent()) ?? '';
    expect(text).toContain(MOVED_URL);
    expect(text).not.toContain(issued.body.secret);
    expect(text).not.toContain(MINIAPP.secret);
  }, 90_000);
});

describe('one partner, its own data only', () => {
  it('a miniapp sees none of another miniapp’s settings, deliveries or audit entries', async () => {
    // Something in every table of its own: a payment with its delivery, and an audit entry.
    await deliveredPayment();
    const renamed = await harness.call(
      'updateMiniapp',
      { name: 'Own data only' },
      { authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret), path: `/api/v1/dashboard/miniapps/${MINIAPP.id}` },
    );
    expect(renamed.status).toBe(200);
    await signIn(MINIAPP.id, MINIAPP.secret);
    expect(await page.locator('#operator-bar').isHidden()).toBe(true);
    for (const tab of ['Settings', 'Credentials', 'Payments', 'E6 deliveries', 'Audit log']) {
      await openTab(tab);
      await page.locator('[role="tabpanel"]:not([hidden]) table tbody tr, #panel-settings:not([hidden]) input').first().waitFor({
        timeout: STEP_MS,
      });
      const text = await page.locator('main').innerText();
      expect(text, tab).not.toContain(OTHER.id);
      expect(text, tab).not.toContain('other.example');
    }
    // The other miniapp signs in and sees its own.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(OTHER.id, OTHER.secret);
    expect(await page.locator('#identity dd[data-field="app_id"]').textContent()).toBe(OTHER.id);
    expect(await field('complete_order').inputValue()).toBe('https://other.example/secret-callback');
    await openTab('E6 deliveries');
    await page.locator('#deliveries-table tbody tr').first().waitFor({ timeout: STEP_MS });
    expect(await page.locator('#deliveries-table tbody').innerText()).not.toContain(MINIAPP.id);
  }, 90_000);
});

describe('operators', () => {
  it('an operator signs in with the admin token and reads any partner', async () => {
    await page.goto(`${harness.running.url}/dashboard/`);
    await page.locator('body[data-ready="true"]').waitFor({ timeout: STEP_MS });
    await page.getByLabel('an operator').check();
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app').waitFor({ state: 'visible', timeout: STEP_MS });
    const picker = page.getByLabel('Partner', { exact: true });
    expect(await picker.locator('option').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining(HOSTAPP.id), expect.stringContaining(MINIAPP.id), expect.stringContaining(OTHER.id)]),
    );
    await picker.selectOption(`miniapps/${OTHER.id}`);
    await expect.poll(() => page.locator('#identity dd[data-field="app_id"]').textContent(), { timeout: STEP_MS }).toBe(OTHER.id);
    expect(await field('complete_order').inputValue()).toBe('https://other.example/secret-callback');
    await picker.selectOption(`hostapps/${HOSTAPP.id}`);
    await expect.poll(() => page.locator('#identity dd[data-field="client_id"]').textContent(), { timeout: STEP_MS }).toBe(HOSTAPP.id);
    expect(await field('create_order_payment').inputValue()).toBe(`${harness.hostapp.url}/create-order-payment`);
  }, 90_000);
});
