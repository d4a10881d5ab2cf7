import { Parser } from 'htmlparser2';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { API_NAMES, loadDocument, type ApiName, type JsonObject } from '../../src/contract/documents.js';
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

/** What a page served as HTML holds, read from its text without a browser. */
interface ReadPage {
  /** Whether the page runs any script: then only a browser shows what it links to (Redoc renders its links). */
  scripted: boolean;
  links: FoundLink[];
  /** What a browser loading the page would fetch with it: stylesheets, icons, images, frames. */
  resources: string[];
}

/**
 * Reads a page's links and subresources from its HTML (htmlparser2, the parser of the field) the
 * way Chromium's DOM holds them before any script runs: `<base href>` applied, each attribute as
 * written and resolved. For a page without scripts that is what the browser shows, and reading it
 * here costs no renderer: Chromium's loading of the ~80 script-free pages (guides, decisions, the
 * repository files) was the crawl's largest cost (ADR 0049).
 */
function readHtml(html: string, pageUrl: string): ReadPage {
  let base = pageUrl;
  let scripted = false;
  const anchors: Array<{ href: string; routerLink: boolean }> = [];
  const sources: string[] = [];
  const resourceAttribute: Record<string, string> = {
    link: 'href',
    img: 'src',
    script: 'src',
    iframe: 'src',
    source: 'src',
    video: 'src',
    audio: 'src',
  };
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'script') scripted = true;
        if (name === 'base' && attributes['href'] !== undefined) base = new URL(attributes['href'], pageUrl).href;
        if (name === 'a' && attributes['href'] !== undefined)
          anchors.push({ href: attributes['href'], routerLink: 'data-discover' in attributes });
        const attribute = resourceAttribute[name];
        if (attribute && attributes[attribute]) sources.push(attributes[attribute]);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  return {
    scripted,
    links: anchors.map((anchor) => ({ ...anchor, url: new URL(anchor.href, base).href })),
    resources: sources.map((source) => new URL(source, base).href),
  };
}

/** An operation as its reference shows it, all derived from the contract. */
interface ShownOperation {
  operationId: string;
  tag: string;
  summary: string;
  /** Redoc's deep-link form: the tag with spaces as dashes, then the operationId. */
  hash: string;
  /**
   * The id Redoc gives the operation's section (and the route it rewrites the deep link to,
   * `#/<id>`): the tag and the operationId in lower case, spaces as dashes.
   */
  sectionId: string;
  /** The curl sample's first line: the method and the sandbox URL of this very operation. */
  curlLine: string;
}

/** The reference's operations, grouped by their (first) tag in the order the tags first appear. */
function shownOperations(api: ApiName): ShownOperation[] {
  const samples = new Map(codeSamples(api, loadLosslessDocument(api)).map((sample) => [sample.operationId, sample]));
  const operations = documentedOperations(loadDocument(api)).map((operation): ShownOperation => {
    const tag = ((operation.node.tags as string[] | undefined) ?? [])[0] ?? '';
    return {
      operationId: operation.operationId,
      tag,
      summary: String((operation.node as JsonObject).summary),
      hash: `#tag/${tag.replace(/\s+/g, '-')}/operation/${operation.operationId}`,
      sectionId: `${tag.replace(/\s+/g, '-')}/${operation.operationId}`.toLowerCase(),
      curlLine: samples.get(operation.operationId)!.curl.split('\n')[0]!.replace(/ \\$/, ''),
    };
  });
  const tags = [...new Set(operations.map((operation) => operation.tag))];
  return tags.flatMap((tag) => operations.filter((operation) => operation.tag === tag));
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
    let routerLinksChecked = 0;
    let routerLinksFollowed = 0;
    // One tab loads every page that runs a script, in turn: a new tab per page cost Chromium a
    // renderer each time. A page without scripts is read from its HTML (readHtml).
    const tab = await newTab();
    const page = tab.page;
    let pagesRendered = 0;
    // Every address the docs name (a link or a subresource) is asked once; an HTML page under
    // /docs/ that answers joins the crawl, however it was first named.
    const status = async (url: string): Promise<number> => {
      if (!checked.has(url)) {
        const response = await page.request.get(url);
        checked.set(url, response.status());
        const html = (response.headers()['content-type'] ?? '').startsWith('text/html');
        if (response.status() === 200 && html && new URL(url).pathname.startsWith('/docs/')) queue.push(url);
      }
      return checked.get(url)!;
    };
    while (queue.length > 0) {
      const pageUrl = queue.shift()!;
      if (crawled.has(pageUrl)) continue;
      crawled.add(pageUrl);
      const served = await page.request.get(pageUrl);
      if (served.status() !== 200) broken.push(`${pageUrl}: HTTP ${served.status()}`);
      const read = readHtml(await served.text(), pageUrl);
      let links = read.links;
      if (read.scripted) {
        const failures = await tab.open(pageUrl);
        broken.push(...failures.map((failure) => `${pageUrl}: ${failure}`));
        links = await linksOn(page);
        pagesRendered++;
      } else {
        // What the browser would have fetched with the page, each answering 200 as it would have to.
        for (const resource of new Set(read.resources)) {
          const answer = await status(resource);
          if (answer !== 200) broken.push(`${pageUrl}: HTTP ${answer} for ${resource}`);
        }
      }
      const routerLinks: string[] = [];
      for (const link of links) {
        if (link.href.startsWith('#') || link.href.startsWith('mailto:')) continue;
        if (link.routerLink) {
          routerLinks.push(link.href);
          continue;
        }
        const target = new URL(link.url);
        if (target.origin !== origin) continue; // the Redocly credit link: not ours, and the test runs offline
        target.hash = '';
        const answer = await status(target.href);
        if (answer !== 200) broken.push(`${pageUrl}: ${link.href} -> HTTP ${answer}`);
      }
      // Redoc's sidebar links route inside the page, to `#<href>`. Each must name a section the
      // page has: Redoc marks every section with its route (data-section-id; the id itself is set
      // only once a section is rendered). The first and the last are followed too, which must
      // never show "no page": following every one laid the long page out again per link, the
      // routing the deep-link test already proves per operation's tag.
      const sections = new Set(
        await page
          .locator('[data-section-id]')
          .evaluateAll((elements) => elements.map((element) => element.getAttribute('data-section-id'))),
      );
      for (const href of routerLinks) {
        if (!sections.has(href)) broken.push(`${pageUrl}: sidebar link ${href} names no section of the page`);
        routerLinksChecked++;
      }
      for (const href of new Set(routerLinks.length > 0 ? [routerLinks[0]!, routerLinks.at(-1)!] : [])) {
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
    // The references (Redoc renders their links from a script) were read in Chromium, the rest from their HTML.
    expect(pagesRendered).toBeGreaterThanOrEqual(API_NAMES.length);
    expect(routerLinksChecked).toBeGreaterThan(0);
    expect(routerLinksFollowed).toBeGreaterThan(0);
  }, 600_000);

  it('every operation shows its summary and request sample in its own section, and Redoc deep links (#tag/<tag>/operation/<operationId>) land on the operation', async ({
    expect,
  }) => {
    const origin = new URL(running.platform.url).origin;
    // The three references side by side, one tab each: each waits on Redoc rendering in its own
    // renderer process, not on the others.
    const missed = (
      await Promise.all(
        API_NAMES.map(async (api) => {
          const page = await browser.newPage({ viewport: VIEWPORT });
          const missedOnPage: string[] = [];
          const linkTo = (operation: ShownOperation) => `${origin}/docs/${api}.html${operation.hash}`;

          // A deep link followed as a reader would: a fresh load (a link from elsewhere) or a
          // change of the loaded page's hash, which Redoc routes the same way. Its heading must
          // come into view, and the page must not say it has no page there.
          const follow = async (operation: ShownOperation, fresh: boolean) => {
            if (fresh) await page.goto(linkTo(operation), { waitUntil: 'load', timeout: 60_000 });
            else
              await page.evaluate(
                (target) => ((globalThis as unknown as { location: { hash: string } }).location.hash = target),
                operation.hash,
              );
            const heading = page.locator('h1, h2').filter({ hasText: operation.summary }).first();
            const inView = await heading
              .waitFor({ state: 'visible', timeout: 20_000 })
              .then(() =>
                expect
                  .poll(
                    async () => {
                      const box = await heading.boundingBox();
                      return box !== null && box.y >= 0 && box.y < VIEWPORT.height;
                    },
                    { timeout: 10_000 },
                  )
                  .toBe(true),
              )
              .then(
                () => true,
                () => false,
              );
            if (!inView) missedOnPage.push(`${linkTo(operation)}: "${operation.summary}" is not in view`);
            if ((await page.locator('body').innerText()).includes(NO_PAGE)) missedOnPage.push(`${linkTo(operation)}: ${NO_PAGE}`);
          };

          // The operation's own section, by the id Redoc gives it: it holds the summary's heading
          // and, in the text a reader sees (innerText; the page's textContent also holds the inline
          // script that carries every sample), the curl sample. Redoc renders only the sections
          // near the viewport, so one reached without a route is scrolled to, again on every try:
          // the sections above it grow as they render and push it back out.
          const checkSection = async (operation: ShownOperation, scroll: boolean) => {
            const placeholder = page.locator(`[data-section-id="/${operation.sectionId}"]`);
            const section = page.locator(`[id="${operation.sectionId}"]`);
            let shown = { section: false, heading: false, sample: false };
            await expect
              .poll(
                async () => {
                  if (scroll && (await placeholder.count()) === 1) await placeholder.evaluate((element) => element.scrollIntoView());
                  const found = (await section.count()) === 1;
                  shown = {
                    section: found,
                    heading: found && (await section.locator('h1, h2').filter({ hasText: operation.summary }).first().isVisible()),
                    sample: found && (await section.innerText({ timeout: 1_000 })).includes(operation.curlLine),
                  };
                  return shown.section && shown.heading && shown.sample;
                },
                { timeout: 20_000 },
              )
              .toBe(true)
              .catch(() => undefined);
            const where = `${api} ${operation.operationId}`;
            if (!shown.section) missedOnPage.push(`${where}: no element with id "${operation.sectionId}"`);
            else if (!shown.heading) missedOnPage.push(`${where}: its section has no heading "${operation.summary}"`);
            else if (!shown.sample) missedOnPage.push(`${where}: its section shows no curl sample (${operation.curlLine})`);
          };

          // Redoc puts on the page only the operations of the tag routed to (another tag's are a
          // heading until then), so each tag's first operation is reached by its deep link and the
          // rest of the tag by scrolling: each section is rendered once, where a route per
          // operation laid the long page out again each time (about a CPU-second of renderer).
          const operations = shownOperations(api);
          if (operations.length === 0) missedOnPage.push(`${api}: the contract has no operations to look for`);
          let tag: string | undefined;
          for (const [index, operation] of operations.entries()) {
            const routed = operation.tag !== tag;
            if (routed) await follow(operation, index === 0);
            tag = operation.tag;
            await checkSection(operation, !routed);
          }
          // The last operation by its deep link too, unless it was reached by one already.
          const last = operations.at(-1);
          if (last && operations.filter((operation) => operation.tag === last.tag).length > 1) {
            await follow(last, false);
            await checkSection(last, false);
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
