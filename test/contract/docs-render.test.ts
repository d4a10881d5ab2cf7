import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { launchChromium, openGeneratedPage } from '../../scripts/lib/docs-browser.js';
import { listGeneratedPages } from '../../scripts/lib/generated-pages.js';

const pages = await listGeneratedPages();

// Launched inside the tests rather than in beforeAll, so a missing Chromium fails every test
// with the install command instead of being reported as skipped.
let browser: Promise<Browser> | undefined;

describe('generated documentation pages', () => {
  afterAll(async () => {
    await (await browser?.catch(() => undefined))?.close();
  });

  for (const generated of pages) {
    it(`${generated.name}.html renders offline with no console error or failed request, and shows its titles and names`, async () => {
      browser ??= launchChromium();
      const rendered = await openGeneratedPage(await browser, generated.file);
      try {
        expect(rendered.consoleErrors).toEqual([]);
        expect(rendered.failedRequests).toEqual([]);
        expect(generated.visibleTexts.filter((text) => !rendered.visibleText.includes(text))).toEqual([]);
        expect(generated.renderedTexts.filter((text) => !rendered.renderedText.includes(text))).toEqual([]);
      } finally {
        await rendered.page.close();
      }
    }, 60_000);
  }

  it('index.html: every in-page link (guides, error codes) has a target', () => {
    const index = pages.find((page) => page.name === 'index');
    const html = readFileSync(index?.file ?? '', 'utf8');
    const ids = new Set([...html.matchAll(/ id="([^"]+)"/g)].map((match) => match[1]));
    const targets = [...html.matchAll(/ href="#([^"]+)"/g)].map((match) => match[1]);
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((target) => !ids.has(target))).toEqual([]);
  });
});
