import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Debian's Chromium headless shell (package chromium-headless-shell): the same Blink and V8 as
 * the browser, without the browser's windowing and UI layers, which the browser suites paid for
 * in every action (ADR 0049). `npm test` installs it when missing (scripts/ensure-chromium.ts).
 */
export const chromiumPackage = 'chromium-headless-shell';
export const chromiumPath = process.env['CHROMIUM_PATH'] ?? `/usr/bin/${chromiumPackage}`;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `Chromium not found at ${chromiumPath}: run npm test (it installs Debian's ${chromiumPackage} as root), or apt-get update && apt-get install -y ${chromiumPackage}, or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

export interface RenderedPage {
  page: Page;
  consoleErrors: string[];
  /** Requests that failed, and every request that tried to leave the machine (all are refused). */
  failedRequests: string[];
  /** Text the reader sees without clicking. */
  visibleText: string;
  /** All rendered text, including collapsed sidebar groups (where Redoc lists operations). */
  renderedText: string;
}

/**
 * Opens a generated page from disk the way a reader would, offline: any request that is not
 * file: or data: is refused and counted as a failure, as are console errors and page errors.
 */
export async function openGeneratedPage(browser: Browser, file: string): Promise<RenderedPage> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const consoleErrors: string[] = [];
  const failedRequests: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  page.on('requestfailed', (request) => failedRequests.push(`${request.url()} (${request.failure()?.errorText ?? 'failed'})`));
  await page.route(/^(?!file:|data:)/, (route) => route.abort('internetdisconnected'));
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  await page.waitForLoadState('networkidle');
  const visibleText = await page.locator('body').innerText();
  const renderedText = (await page.locator('body').textContent()) ?? '';
  return { page, consoleErrors, failedRequests, visibleText, renderedText };
}
