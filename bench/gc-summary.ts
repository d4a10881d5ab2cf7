/**
 * Summarises a V8 GC trace written by `BENCH_GC_TRACE=<file> npm run bench`: per contender and
 * phase (`<path>-r<round>-warm-up`, `-saturated`, `-paced`), how often each kind of collection ran, its pauses, and what
 * a scavenge found alive (survived) and moved to the old generation (promoted). Survivors are
 * what makes scavenges slow and, once promoted, full mark-compacts come (ADR 0036).
 *
 *   npx tsx bench/gc-summary.ts <trace file>
 */
import { readFileSync } from 'node:fs';

interface Collection {
  kind: string;
  pauseMs: number;
  allocatedBytes: number;
  survivedBytes: number;
  promotedBytes: number;
}

interface Phase {
  name: string;
  startMs: number;
  endMs: number;
  collections: Collection[];
}

/** `--trace-gc-nvp` writes one line of name=value pairs per collection. */
function parseCollection(line: string): Collection | undefined {
  const fields = new Map<string, string>();
  for (const pair of line.split(' ')) {
    const equals = pair.indexOf('=');
    if (equals > 0) fields.set(pair.slice(0, equals), pair.slice(equals + 1));
  }
  const kind = fields.get('gc');
  if (kind === undefined) return undefined;
  const number = (name: string) => Number(fields.get(name) ?? 0);
  return {
    kind,
    pauseMs: number('pause'),
    allocatedBytes: number('allocated'),
    survivedBytes: number('new_space_survived'),
    promotedBytes: number('promoted'),
  };
}

export function summarise(text: string): Phase[] {
  const phases: Phase[] = [];
  // Collections outside a marked phase (a process starting or stopping) are not counted.
  let current: Phase | undefined;
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    if (space < 0) continue;
    const at = Number(line.slice(0, space));
    const rest = line.slice(space + 1);
    const marker = /^# (\S+) (\S+)$/.exec(rest);
    if (marker) {
      if (current) current.endMs = at;
      current = marker[2] === 'end' ? undefined : { name: `${marker[1]} ${marker[2]}`, startMs: at, endMs: at, collections: [] };
      if (current) phases.push(current);
      continue;
    }
    const collection = parseCollection(rest);
    if (collection) current?.collections.push(collection);
  }
  return phases.filter((phase) => phase.collections.length > 0);
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(2);
const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);

export function table(phases: Phase[]): string {
  const rows = phases.map((phase) => {
    const seconds = Math.max(0.001, (phase.endMs - phase.startMs) / 1000);
    const scavenges = phase.collections.filter((c) => c.kind === 's');
    const full = phase.collections.filter((c) => c.kind !== 's');
    return [
      phase.name,
      seconds.toFixed(1),
      (scavenges.length / seconds).toFixed(1),
      mean(scavenges.map((c) => c.pauseMs)).toFixed(2),
      mb(mean(scavenges.map((c) => c.allocatedBytes))),
      mb(mean(scavenges.map((c) => c.survivedBytes))),
      mb(mean(scavenges.map((c) => c.promotedBytes))),
      String(full.length),
      full.length === 0 ? '–' : Math.max(...full.map((c) => c.pauseMs)).toFixed(1),
    ];
  });
  const head = [
    'phase',
    's',
    'scavenges/s',
    'scavenge pause ms',
    'allocated MB per scavenge',
    'survived MB',
    'promoted MB',
    'mark-compact steps',
    'longest ms',
  ];
  return [head, head.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

if (process.argv[1]?.endsWith('gc-summary.ts')) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: npx tsx bench/gc-summary.ts <trace file>');
  console.log(table(summarise(readFileSync(file, 'utf8'))));
}
