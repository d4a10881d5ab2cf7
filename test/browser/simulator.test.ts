import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { startDemoStack, type DemoStack } from '../../examples/demo-miniapp/stack.js';
import { launchChromium } from '../../scripts/lib/docs-browser.js';

// The whole client side in a real browser: the demo miniapp in the host-app simulator, the
// sandbox host app, the platform (PGlite in memory) and the demo miniapp server. Chromium is
// required: without it these tests fail (`npm test` installs it when missing: ADR 0044).

const STEP_MS = 30_000;

let browser: Browser;
let stack: DemoStack;
let page: Page;
let miniapp: FrameLocator;
let pageErrors: string[];

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDemoStack();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

beforeEach(async () => {
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400) pageErrors.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  // Nothing may leave the machine: the simulator and the miniapp use no external resources.
  await page.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => {
    pageErrors.push(`external request: ${route.request().url()}`);
    return route.abort('internetdisconnected');
  });
  await page.goto(stack.simulatorUrl);
  miniapp = page.frameLocator('#miniapp');
  await miniapp.locator('button[data-sku="coffee-1kg"]').waitFor({ timeout: STEP_MS });
});

afterEach(async () => {
  await page?.close();
  expect(pageErrors).toEqual([]);
});

async function buy(sku: string): Promise<void> {
  await miniapp.locator(`button[data-sku="${sku}"]`).click();
  await page.locator('#pay-sheet').waitFor({ state: 'visible', timeout: STEP_MS });
}

async function resultFor(status: string): Promise<{ order: string; sdk: string; source: string }> {
  await miniapp.locator(`#result-payment-status[data-status="${status}"]`).waitFor({ timeout: STEP_MS });
  await expect.poll(() => miniapp.locator('#result-e6').textContent(), { timeout: STEP_MS }).toBe('yes');
  return {
    order: (await miniapp.locator('#result-order').textContent()) ?? '',
    sdk: (await miniapp.locator('#result-sdk-status').textContent()) ?? '',
    source: (await miniapp.locator('#result-source').textContent()) ?? '',
  };
}

function completionsFor(miniappOrderId: string): Array<Record<string, unknown>> {
  return stack.demo.completions
    .map((completion) => completion.body as Record<string, unknown>)
    .filter((body) => body.miniapp_order_id === miniappOrderId);
}

describe('pay in the host-app simulator', () => {
  it('order → pay → confirm: the miniapp shows paid and its server received E6', async () => {
    await buy('coffee-1kg');
    await expect.poll(() => page.locator('#pay-amount').textContent()).toBe('125,000');
    expect(await page.locator('#pay-currency').textContent()).toBe('VND');
    const orderPaymentId = (await page.locator('#pay-order-payment').textContent()) ?? '';
    expect(orderPaymentId).toMatch(/^hop_/);
    await page.locator('#pay-confirm').click();

    const result = await resultFor('paid');
    expect(result.sdk).toBe('success');
    expect(await page.locator('#pay-sheet').isHidden()).toBe(true);
    const completions = completionsFor(result.order);
    expect(completions).toHaveLength(1);
    expect(completions[0]).toMatchObject({
      hostapp_order_payment_id: orderPaymentId,
      payment_status: 'paid',
      hostapp_client_id: 'ha_sandbox',
    });
    // The page asks E2 while it waits, so either E2 or E6 may tell the demo first; E6 arrives
    // either way (checked above) and a terminal status never changes after the first.
    expect(stack.demo.orders.get(result.order)).toMatchObject({ payment_status: 'paid' });
    expect(['E6', 'E2']).toContain(stack.demo.orders.get(result.order)?.status_source);
  }, 90_000);

  it('cancel: the SDK answers cancelled and E6 reports cancelled', async () => {
    await buy('tea-box');
    await page.locator('#pay-cancel').click();
    const result = await resultFor('cancelled');
    expect(result.sdk).toBe('cancelled');
    expect(completionsFor(result.order)).toEqual([expect.objectContaining({ payment_status: 'cancelled' })]);
  }, 90_000);

  it('fail: the SDK answers failed and E6 reports failed with the reason', async () => {
    await buy('tea-box');
    await page.locator('#pay-fail').click();
    const result = await resultFor('failed');
    expect(result.sdk).toBe('failed');
    expect(completionsFor(result.order)).toEqual([
      expect.objectContaining({ payment_status: 'failed', payment_fail_reason: expect.any(String) }),
    ]);
  }, 90_000);

  it('a host app that never calls E5: the result page learns paid through E2, then E6 arrives', async () => {
    await buy('sandbox-no-e5');
    await page.locator('#pay-confirm').click();
    const result = await resultFor('paid');
    expect(result.sdk).toBe('success');
    expect(result.source).toBe('E2');
    expect(completionsFor(result.order)).toEqual([expect.objectContaining({ payment_status: 'paid' })]);
  }, 90_000);

  it('a host app that never calls E5, and a page that never asks: the platform reconciles it by itself and E6 arrives', async () => {
    await buy('sandbox-reconciled');
    await page.locator('#pay-confirm').click();
    const result = await resultFor('paid');
    expect(result.sdk).toBe('success');
    expect(result.source).toBe('E6');
    expect(completionsFor(result.order)).toEqual([expect.objectContaining({ payment_status: 'paid' })]);
  }, 90_000);
});

describe('custom events in the host-app simulator', () => {
  async function sendPromiseFromMiniapp(type: string, timeoutMs: number): Promise<string> {
    await miniapp.locator('#event-type').fill(type);
    await miniapp.locator('#event-timeout').fill(String(timeoutMs));
    await miniapp.locator('#event-form button').click();
    await expect.poll(() => miniapp.locator('#event-result').textContent(), { timeout: STEP_MS }).toMatch(/^(resolved|rejected)/);
    return (await miniapp.locator('#event-result').textContent()) ?? '';
  }

  it('sendPromise round trip: the simulator shows the event and its answer resolves the promise', async () => {
    expect(await sendPromiseFromMiniapp('demo_ping', 30_000)).toBe('resolved: {"received":true,"type":"demo_ping"}');
    expect(await page.locator('#log').textContent()).toContain('custom event demo_ping (sendPromise)');
  }, 90_000);

  it('sendPromise rejects with HOST_REJECTED when the host app refuses the event', async () => {
    await page.locator('#custom-mode').selectOption('fail');
    expect(await sendPromiseFromMiniapp('demo_ping', 30_000)).toMatch(/^rejected: HOST_REJECTED: .*rejects demo_ping/);
  }, 90_000);

  it('sendPromise rejects with TIMEOUT when the host app never answers', async () => {
    await page.locator('#custom-mode').selectOption('ignore');
    expect(await sendPromiseFromMiniapp('demo_slow', 500)).toMatch(
      /^rejected: TIMEOUT: the host app did not answer custom_event within 500 ms/,
    );
  }, 90_000);

  it('an event the host app sends reaches the miniapp subscribe callback', async () => {
    await page.locator('#emit-type').fill('coupon_granted');
    await page.locator('#emit-payload').fill('{"code":"WELCOME10"}');
    await page.locator('#emit-form button').click();
    await expect
      .poll(() => miniapp.locator('#host-events').textContent(), { timeout: STEP_MS })
      .toBe('coupon_granted: {"code":"WELCOME10"}');
  }, 90_000);
});
