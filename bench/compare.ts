/**
 * Do two full runs agree? `npx tsx bench/compare.ts <first.json> <second.json>` prints each ratio
 * target of both runs, each judged by the current code from its rounds, and whether the second
 * lies within ±10% of the first; exits 1 when one does not. `npm run bench` makes the same comparison with the previous latest.json (or
 * BENCH_COMPARE) and writes it into latest.md.
 */
import { readFileSync } from 'node:fs';
import type { BenchResults } from './report.js';
import { compareResults } from './targets.js';

const [firstFile, secondFile] = process.argv.slice(2);
if (!firstFile || !secondFile) throw new Error('usage: npx tsx bench/compare.ts <first.json> <second.json>');
const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
const first = read(firstFile);
const second = read(secondFile);
const rows = compareResults(first, second);
const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
console.log(`| Ratio | ${first.machine.date} (${first.commit}) | ${second.machine.date} (${second.commit}) | difference | within ±10% |`);
console.log('|---|---:|---:|---:|---|');
for (const row of rows)
  console.log(
    `| ${row.name} | ${row.first.toFixed(2)} | ${row.second.toFixed(2)} | ${percent(row.difference)} | ${row.agrees ? 'yes' : '**no**'} |`,
  );
const agreeing = rows.filter((row) => row.agrees).length;
console.log(`\n${agreeing} of ${rows.length} ratios agree within ±10%.`);
process.exitCode = agreeing === rows.length && rows.length > 0 ? 0 : 1;
