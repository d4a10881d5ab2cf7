import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from './paths.js';

export interface ApiEntry {
  /** Short name used for every generated file: platform, hostapp, miniapp. */
  name: string;
  /** The alias redocly.yaml gives the API, e.g. platform@v1. */
  alias: string;
}

/** The APIs as redocly.yaml lists them: that file is the one list of the contract's documents. */
export function listApis(): ApiEntry[] {
  const config = parse(readFileSync(path.join(repoRoot, 'redocly.yaml'), 'utf8')) as { apis?: Record<string, unknown> };
  const aliases = Object.keys(config.apis ?? {});
  if (aliases.length === 0) throw new Error('redocly.yaml lists no apis');
  return aliases.map((alias) => ({ alias, name: alias.split('@')[0] ?? alias }));
}
