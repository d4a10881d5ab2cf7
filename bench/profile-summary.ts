/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): the functions with the most self time, and the
 * heaviest inclusive frames of the project's own code. Usage: tsx bench/profile-summary.ts <file> [top]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]');
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const selfMs = new Map<number, number>();
profile.samples.forEach((id, index) => selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000));
const total = [...selfMs.values()].reduce((a, b) => a + b, 0);

const label = (node: ProfileNode) => {
  const url = node.callFrame.url.replace(/^file:\/\/.*?\/(node_modules|src|bench)\//, '$1/');
  return `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`;
};
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, ms] of selfMs) {
  const node = byId.get(id)!;
  self.set(label(node), (self.get(label(node)) ?? 0) + ms);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const name = label(byId.get(at)!);
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
  }
}
const show = (title: string, entries: Map<string, number>, filter: (name: string) => boolean = () => true) => {
  console.log(`\n${title} (of ${total.toFixed(0)} ms sampled)`);
  for (const [name, ms] of [...entries]
    .filter(([name]) => filter(name))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    console.log(`${((ms / total) * 100).toFixed(1).padStart(5)} %  ${ms.toFixed(0).padStart(7)} ms  ${name}`);
  }
};
show('Self time', self);
show('Inclusive time, project code', inclusive, (name) => / src\//.test(name));
