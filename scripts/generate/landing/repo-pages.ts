import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Marked, type Tokens } from 'marked';
import { artefactDirs, generatedDir, guidesDir, repoRoot } from '../../lib/paths.js';
import { guideSlug, slugify } from './guides.js';
import { landingPageCss } from './styles.js';

/** Where the landing page lives; every link on the docs is made relative to a page in this tree. */
export const landingPageDir = path.join(generatedDir, artefactDirs.docs);
/** Repository files the docs link to are rendered under here (`repo/docs/decisions/0004-….html`). */
const repoPagesDir = path.join(landingPageDir, 'repo');
/** The href of a link whose target does not exist: rendered as its text only. */
export const unlinked = '';

export interface LinkContext {
  /** The folder of the Markdown file the link is written in. */
  sourceDir: string;
  /** The folder of the page the link ends up on (in the generated/docs tree). */
  pageDir: string;
  image?: boolean;
}

export interface RenderedRepoPage {
  /** Relative to generated/docs/. */
  file: string;
  html: string;
}

/**
 * Turns the relative links of Markdown written for the repository into links that work on the
 * served docs (`/docs/`) exactly as from `file:`:
 *
 * - a guide: its section of the landing page (`index.html#slug`);
 * - a generated artefact (the bundles in generated/openapi/): a relative link, served at /openapi/;
 * - any other repository file: a page of its own under generated/docs/repo/ (Markdown rendered,
 *   other text shown as it is), rendered by `renderPages` together with the pages they link to;
 * - a target that does not exist: no link.
 *
 * Images keep pointing at the file itself (docs/screenshots/ is served at /docs/screenshots/).
 */
export class RepoLinks {
  private readonly pending = new Set<string>();
  private readonly rendered = new Map<string, RenderedRepoPage>();

  constructor(private readonly guideSlugs: ReadonlySet<string>) {}

  href(href: string, context: LinkContext): string {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('/')) return href;
    const [target = '', fragment] = href.split('#', 2);
    const resolved = path.resolve(context.sourceDir, decodeURI(target));
    const withFragment = (link: string, anchor = fragment) => (anchor ? `${link}#${anchor}` : link);
    const relative = (file: string) => path.relative(context.pageDir, file).split(path.sep).join('/');
    if (context.image) return withFragment(relative(resolved));
    if (path.dirname(resolved) === guidesDir && resolved.endsWith('.md') && this.guideSlugs.has(guideSlug(path.basename(resolved)))) {
      const slug = guideSlug(path.basename(resolved));
      return `${relative(path.join(landingPageDir, 'index.html'))}#${fragment ? `${slug}--${fragment}` : slug}`;
    }
    if (resolved.startsWith(generatedDir + path.sep)) return withFragment(relative(resolved));
    if (!resolved.startsWith(repoRoot + path.sep) || !existsSync(resolved) || !statSync(resolved).isFile()) return unlinked;
    if (!this.rendered.has(resolved)) this.pending.add(resolved);
    return withFragment(relative(repoPagePath(resolved)));
  }

  /** Renders every repository file linked so far, and the files those pages link to. */
  async renderPages(): Promise<RenderedRepoPage[]> {
    while (this.pending.size > 0) {
      const [next] = this.pending;
      this.pending.delete(next!);
      if (this.rendered.has(next!)) continue;
      this.rendered.set(next!, { file: '', html: '' });
      this.rendered.set(next!, await this.renderPage(next!));
    }
    return [...this.rendered.values()].sort((a, b) => a.file.localeCompare(b.file));
  }

  private async renderPage(file: string): Promise<RenderedRepoPage> {
    const source = await readFile(file, 'utf8');
    const page = repoPagePath(file);
    const name = path.relative(repoRoot, file).split(path.sep).join('/');
    const body = file.endsWith('.md') ? this.renderMarkdown(source, file, page) : `<pre><code>${escapeHtml(source)}</code></pre>`;
    const title = (file.endsWith('.md') && /^#\s+(.+)$/m.exec(source)?.[1]?.trim()) || name;
    const home = path.relative(path.dirname(page), path.join(landingPageDir, 'index.html')).split(path.sep).join('/');
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Minibridge</title>
<style>${landingPageCss}</style>
</head>
<body>
<header>
<p><a href="${home}">Minibridge API documentation</a> · <code>${escapeHtml(name)}</code></p>
</header>
<main class="single">
<article>
${body}
</article>
</main>
<footer>Rendered by <code>npm run build</code> from <code>${escapeHtml(name)}</code>. Do not edit by hand.</footer>
</body>
</html>
`;
    return { file: path.relative(landingPageDir, page).split(path.sep).join('/'), html };
  }

  private renderMarkdown(markdown: string, file: string, page: string): string {
    const context: LinkContext = { sourceDir: path.dirname(file), pageDir: path.dirname(page) };
    const marked = new Marked({
      gfm: true,
      walkTokens: (token) => {
        if (token.type === 'link' || token.type === 'image') {
          const link = token as Tokens.Link | Tokens.Image;
          link.href = this.href(link.href, { ...context, image: token.type === 'image' });
        }
      },
      renderer: {
        heading({ tokens, depth, text }) {
          return `<h${depth} id="${slugify(text)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
        },
        link({ href, tokens }) {
          return href === unlinked ? this.parser.parseInline(tokens) : false;
        },
      },
    });
    return marked.parse(markdown, { async: false });
  }
}

function repoPagePath(file: string): string {
  const relative = path.relative(repoRoot, file);
  return path.join(repoPagesDir, `${relative.replace(/\.md$/, '')}.html`);
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
