/**
 * npm run docs:screenshot: opens every generated page in headless Chromium, offline, fails on
 * any console error, failed request or missing title/operation, and saves a 1280x900 PNG of
 * each page to docs/screenshots/.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { launchChromium, openGeneratedPage } from './lib/docs-browser.js';
import { listGeneratedPages } from './lib/generated-pages.js';
import { screenshotsDir } from './lib/paths.js';

const browser = await launchChromium();
let failed = false;
try {
  await mkdir(screenshotsDir, { recursive: true });
  for (const generated of await listGeneratedPages()) {
    const rendered = await openGeneratedPage(browser, generated.file);
    const missing = [
      ...generated.visibleTexts.filter((text) => !rendered.visibleText.includes(text)),
      ...generated.renderedTexts.filter((text) => !rendered.renderedText.includes(text)),
    ];
    const problems = [
      ...rendered.consoleErrors.map((error) => `console error: ${error}`),
      ...rendered.failedRequests.map((request) => `failed request: ${request}`),
      ...missing.map((text) => `missing text: ${text}`),
    ];
    const output = path.join(screenshotsDir, `${generated.name}.png`);
    await rendered.page.screenshot({ path: output });
    await rendered.page.close();
    console.log(`${problems.length === 0 ? '✔' : '✘'} ${generated.name}: ${path.relative(process.cwd(), output)}`);
    for (const problem of problems) console.error(`  ${problem}`);
    failed ||= problems.length > 0;
  }
} finally {
  await browser.close();
}
if (failed) process.exit(1);
