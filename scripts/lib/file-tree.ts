import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Relative paths (with /) of every file under root, sorted. */
export async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

export interface TreeDifference {
  missing: string[];
  extra: string[];
  changed: string[];
}

/** How actual differs from expected, file by file, comparing bytes. */
export async function compareTrees(expectedRoot: string, actualRoot: string): Promise<TreeDifference> {
  const [expected, actual] = await Promise.all([listFiles(expectedRoot), listFiles(actualRoot)]);
  const actualSet = new Set(actual);
  const expectedSet = new Set(expected);
  const changed: string[] = [];
  for (const file of expected.filter((name) => actualSet.has(name))) {
    const [a, b] = await Promise.all([readFile(path.join(expectedRoot, file)), readFile(path.join(actualRoot, file))]);
    if (!a.equals(b)) changed.push(file);
  }
  return {
    missing: expected.filter((name) => !actualSet.has(name)),
    extra: actual.filter((name) => !expectedSet.has(name)),
    changed,
  };
}

export function isSame(difference: TreeDifference): boolean {
  return difference.missing.length + difference.extra.length + difference.changed.length === 0;
}

/**
 * Makes target equal to source, writing only files whose bytes differ, so readers of target
 * (tests, the dev server) never see it half-empty and unchanged files keep their timestamps.
 */
export async function syncTree(sourceRoot: string, targetRoot: string): Promise<TreeDifference> {
  const difference = await compareTrees(sourceRoot, targetRoot);
  for (const file of [...difference.missing, ...difference.changed]) {
    await mkdir(path.dirname(path.join(targetRoot, file)), { recursive: true });
    await writeFile(path.join(targetRoot, file), await readFile(path.join(sourceRoot, file)));
  }
  for (const file of difference.extra) await rm(path.join(targetRoot, file));
  return difference;
}

/** The first line where two texts differ, both sides cut around the first differing column. */
export async function firstDifference(expectedFile: string, actualFile: string): Promise<string> {
  const [expected, actual] = await Promise.all([readFile(expectedFile, 'utf8'), readFile(actualFile, 'utf8')]);
  const a = expected.split('\n');
  const b = actual.split('\n');
  let line = 0;
  while (line < a.length && a[line] === b[line]) line += 1;
  const left = a[line] ?? '';
  const right = b[line] ?? '';
  let column = 0;
  while (column < left.length && left[column] === right[column]) column += 1;
  const start = Math.max(0, column - 60);
  const clip = (text: string | undefined): string =>
    text === undefined ? '(end of file)' : (start > 0 ? '…' : '') + text.slice(start, start + 140) + (text.length > start + 140 ? '…' : '');
  return `line ${line + 1}, column ${column + 1}: sources produce ${JSON.stringify(clip(a[line]))}; generated/ has ${JSON.stringify(clip(b[line]))}`;
}
