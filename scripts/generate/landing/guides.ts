import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Marked, type Tokens } from 'marked';
import { guidesDir } from '../../lib/paths.js';
import { landingPageDir, unlinked, type RepoLinks } from './repo-pages.js';
import { renderSequenceSvg } from './sequence-diagram.js';

/** A guide in docs/guides/: `NN-topic.md`, rendered in file-name order (see docs/guides/README.md). */
export interface Guide {
  /** The file name without its order prefix and extension: the guide's anchor on the page. */
  slug: string;
  title: string;
  file: string;
  markdown: string;
}

const indexFile = 'README.md';

export function guideSlug(file: string): string {
  return file.replace(/\.md$/, '').replace(/^\d+-/, '');
}

export async function loadGuides(dir: string = guidesDir): Promise<Guide[]> {
  if (!existsSync(dir)) return [];
  const files = (await readdir(dir)).filter((file) => file.endsWith('.md') && file !== indexFile).sort();
  const guides = await Promise.all(
    files.map(async (file) => {
      const markdown = await readFile(path.join(dir, file), 'utf8');
      const title = /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim();
      if (!title) throw new Error(`docs/guides/${file} needs a "# Title" heading`);
      return { slug: guideSlug(file), title, file, markdown };
    }),
  );
  const slugs = guides.map((guide) => guide.slug);
  const duplicate = slugs.find((slug, index) => slugs.indexOf(slug) !== index);
  if (duplicate) throw new Error(`docs/guides: two guides share the anchor "${duplicate}"`);
  return guides;
}

/** GitHub-style heading slug, so in-guide links written for GitHub keep working on the page. */
export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/**
 * Renders one guide as a section of the landing page; its headings move one level down under the
 * page title. Links are written relative to docs/guides/ (so they work on GitHub); `links` turns
 * them into links that work from the page, over HTTP as from file:.
 */
export function renderGuide(guide: Guide, links: RepoLinks, dir: string = guidesDir): string {
  const marked = new Marked({
    gfm: true,
    walkTokens(token) {
      if (token.type === 'link' || token.type === 'image') {
        const link = token as Tokens.Link | Tokens.Image;
        link.href = links.href(link.href, { sourceDir: dir, pageDir: landingPageDir, image: token.type === 'image' });
      }
    },
    renderer: {
      link({ href, tokens }) {
        // A link to nothing (a placeholder such as NNNN-….md) is shown as its text.
        return href === unlinked ? this.parser.parseInline(tokens) : false;
      },
      heading({ tokens, depth, text }) {
        const id = depth === 1 ? guide.slug : `${guide.slug}--${slugify(text)}`;
        const level = Math.min(depth + 1, 6);
        return `<h${level} id="${id}">${this.parser.parseInline(tokens)}</h${level}>\n`;
      },
      code({ text, lang }) {
        if (lang !== 'sequence') return false;
        return `<figure class="diagram">${renderSequenceSvg(text, `${guide.title}: sequence diagram`)}</figure>\n`;
      },
    },
  });
  return `<section class="guide" aria-labelledby="${guide.slug}">\n${marked.parse(guide.markdown, { async: false })}</section>`;
}
