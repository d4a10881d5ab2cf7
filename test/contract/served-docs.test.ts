import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { API_NAMES, loadDocument, type JsonObject } from '../../src/contract/documents.js';
import { loadLosslessDocument } from '../../src/contract/losslessDocument.js';
import { configFromEnv } from '../../src/platform/config.js';
import { codeSamples } from '../../scripts/lib/code-samples.js';
import { documentedOperations } from '../../scripts/mock/contract-document.js';
import { launchChromium } from '../../scripts/lib/docs-browser.js';
import { startSandboxPlatform, type SandboxPlatform } from '../support/sandboxPlatform.js';

// The docs as a partner reads them: served by the platform at /docs/, in Debian's Chromium.
// Chromium is required (`npm test` installs it when missing: ADR 0044); without it these tests fail rather than skip.

const VIEWPORT = { width: 1280, height: 900 };
const NO_PAGE = 'No page at this address';

let running: SandboxPlatform;
let browser: Browser;

beforeAll(async () => {
  // The docs only: no E6 worker or reconciler polling PGlite for the minutes
  // Chromium reads pages (an idle platform's polls cost about 50 ms of CPU a second).
  const defaults = configFromEnv({});
  const idle = { worker: { ...defaults.worker, enabled: false }, reconciler: { ...defaults.reconciler, enabled: false } };
  [running, browser] = await Promise.all([startSandboxPlatform('pglite', idle), launchChromium()]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await running?.close();
});

interface FoundLink {
  /** The attribute as written. */
  href: string;
  /** Resolved against the page. */
  url: string;
  /** A link of Redoc's in-page router: it changes the hash route, it loads nothing. */
  routerLink: boolean;
}

/** A tab that records its page errors and failed responses, for one page after another. */
interface Tab {
  page: Page;
  /** Loads `url` and waits for it to render; returns what failed while it loaded. */
  open(url: string): Promise<string[]>;
}

async function newTab(): Promise<Tab> {
  const page = await browser.newPage({ viewport: VIEWPORT });
  let failures: string[] = [];
  page.on('pageerror', (error) => failures.push(`page error: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  return {
    page,
    async open(url) {
      failures = [];
      await page.goto(url, { waitUntil: 'load', timeout: 60_000 });
      // Redoc renders after load: every page the docs serve has links once it has rendered.
      await page.locator('a[href]').first().waitFor({ state: 'attached', timeout: 60_000 });
      return failures;
    },
  };
}

async function openPage(url: string): Promise<{ page: Page; failures: string[] }> {
  const tab = await newTab();
  return { page: tab.page, failures: await tab.open(url) };
}

async function linksOn(page: Page): Promise<FoundLink[]> {
  return page.locator('a[href]').evaluateAll((anchors) =>
    anchors.map((anchor) => ({
      href: anchor.getAttribute('href') ?? '',
      url: (anchor as unknown as { href: string }).href,
      routerLink: anchor.hasAttribute('data-discover'),
    })),
  );
}

// The three tests side by side: each reads the docs in tabs of its own and none changes the platform.
describe.concurrent('the docs served at /docs/', () => {
  it('every link that is not an anchor answers 200, on every page the docs link to', async ({ expect }) => {
    const origin = new URL(running.platform.url).origin;
    const start = `${origin}/docs/`;
    const queue = [start];
    const crawled = new Set<string>();
    const checked = new Map<string, number>();
    const broken: string[] = [];
    let routerLinksFollowed = 0;
    // One tab loads every page in turn: a new tab per page cost Chromium a renderer each time,
    // most of this test's time over the ~80 pages the docs link to.
    const tab = await newTab();
    const page = tab.page;
    while (queue.length > 0) {
      const pageUrl = queue.shift()!;
      if (crawled.has(pageUrl)) continue;
      crawled.add(pageUrl);
      const failures = await tab.open(pageUrl);
      broken.push(...failures.map((failure) => `${pageUrl}: ${failure}`));
      const routerLinks: string[] = [];
      for (const link of await linksOn(page)) {
        if (link.href.startsWith('#') || link.href.startsWith('mailto:')) continue;
        if (link.routerLink) {
          routerLinks.push(link.href);
          continue;
        }
        const target = new URL(link.url);
        if (target.origin !== origin) continue; // the Redocly credit link: not ours, and the test runs offline
        target.hash = '';
        if (!checked.has(target.href)) {
          const response = await page.request.get(target.href);
          checked.set(target.href, response.status());
          const html = (response.headers()['content-type'] ?? '').startsWith('text/html');
          if (response.status() === 200 && html && target.pathname.startsWith('/docs/')) queue.push(target.href);
        }
        if (checked.get(target.href) !== 200) broken.push(`${pageUrl}: ${link.href} -> HTTP ${checked.get(target.href)}`);
      }
      // Redoc's sidebar links route inside the page: following one shows its section, never "no page".
      for (const href of routerLinks) {
        await page.locator(`a[href="${href}"]`).first().click();
        await expect.poll(() => new URL(page.url()).hash, { timeout: 10_000 }).toBe(`#${href}`);
        expect(await page.locator('body').innerText(), `${pageUrl} ${href}`).not.toContain(NO_PAGE);
        routerLinksFollowed++;
      }
    }
    await page.close();
    expect(broken).toEqual([]);
    // The landing page, the three references, and the decisions and READMEs the guides cite.
    expect(crawled.size).toBeGreaterThan(10);
    expect([...checked.keys()].filter((url) => /\/openapi\/(platform|hostapp|miniapp)\.(yaml|json)$/.test(url))).toHaveLength(6);
    expect(routerLinksFollowed).toBeGreaterThan(0);
  }, 600_000);

  it('Redoc deep links (#tag/<tag>/operation/<operationId>) land on the operation, which shows its request sample', async ({ expect }) => {
    const origin = new URL(running.platform.url).origin;
    // The three references side by side, one tab each: each deep link waits on Redoc rendering
    // in its own renderer process, not on the others.
    const missed = (
      await Promise.all(
        API_NAMES.map(async (api) => {
          const samples = new Map(codeSamples(api, loadLosslessDocument(api)).map((sample) => [sample.operationId, sample]));
          const page = await browser.newPage({ viewport: VIEWPORT });
          const missedOnPage: string[] = [];
          let loaded = false;
          for (const operation of documentedOperations(loadDocument(api))) {
            // Redoc's deep-link form: the tag with spaces as dashes, then the operationId.
            const tag = (((operation.node.tags as string[] | undefined) ?? [])[0] ?? '').replace(/\s+/g, '-');
            const hash = `#tag/${tag}/operation/${operation.operationId}`;
            const link = `${origin}/docs/${api}.html${hash}`;
            // The first link of each page is a fresh load (a link followed from elsewhere); the
            // others change the hash of the loaded page, which Redoc routes the same way.
            if (loaded)
              await page.evaluate((target) => ((globalThis as unknown as { location: { hash: string } }).location.hash = target), hash);
            else await page.goto(link, { waitUntil: 'load' });
            loaded = true;
            const summary = String((operation.node as JsonObject).summary);
            const heading = page.locator('h1, h2').filter({ hasText: summary }).first();
            // The sample's first line names the method and the sandbox URL of this very operation.
            const curlLine = samples.get(operation.operationId)!.curl.split('\n')[0]!.replace(/ \\$/, '');
            try {
              await heading.waitFor({ state: 'visible', timeout: 20_000 });
              await expect
                .poll(
                  async () => {
                    const box = await heading.boundingBox();
                    return box !== null && box.y >= 0 && box.y < VIEWPORT.height;
                  },
                  { timeout: 10_000 },
                )
                .toBe(true);
            } catch {
              missedOnPage.push(`${link}: "${summary}" is not in view`);
              continue;
            }
            // The text a reader sees (innerText): the page's textContent also holds the inline
            // script that carries every sample, so a sample found there proves nothing rendered.
            // Redoc renders the sample panels after the heading, hence the wait.
            let shown = '';
            const rendered = await expect
              .poll(async () => (shown = await page.locator('body').innerText()).includes(curlLine), { timeout: 10_000 })
              .toBe(true)
              .then(
                () => true,
                () => false,
              );
            if (shown.includes(NO_PAGE)) missedOnPage.push(`${link}: ${NO_PAGE}`);
            if (!rendered) missedOnPage.push(`${link}: no curl sample (${curlLine})`);
          }
          await page.close();
          return missedOnPage;
        }),
      )
    ).flat();
    expect(missed).toEqual([]);
  }, 600_000);

  it('the landing page: the sequence diagrams fit their column', async ({ expect }) => {
    const { page } = await openPage(`${running.platform.url}/docs/`);
    const sizes = await page
      .locator('figure.diagram')
      .evaluateAll((figures) =>
        figures.map((figure) => ({ svg: figure.querySelector('svg')!.getBoundingClientRect().width, column: figure.clientWidth })),
      );
    await page.close();
    expect(sizes.length).toBeGreaterThan(0);
    expect(sizes.filter((size) => size.svg > size.column)).toEqual([]);
  }, 120_000);
});
