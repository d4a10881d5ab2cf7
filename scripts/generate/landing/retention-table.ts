import { readFile } from 'node:fs/promises';
import { parse } from 'lossless-json';

/** The marker a guide puts on a line of its own where the retention policy's figures belong. */
export const retentionTableMarker = '<!-- generated: retention-table -->';

type Json = Record<string, unknown>;

function days(value: unknown): string {
  const count = Number(String(value));
  if (!Number.isInteger(count)) throw new Error(`the retention table expected whole days, got ${String(value)}`);
  if (count === 0) return 'none';
  if (count % 365 === 0 || count === 1826) return `${count} days (${Math.round(count / 365)} years)`;
  return count === 1 ? '1 day (24 h)' : `${count} days`;
}

/**
 * The retention policy (ADR 0041) read from the bundled Platform API: each kind of record's
 * default and bounds (`x-retention`) and the setting that changes it. The guide never copies them.
 */
export async function renderRetentionTable(platformBundleJson: string): Promise<string> {
  const platform = parse(await readFile(platformBundleJson, 'utf8')) as Json;
  const policy = platform['x-retention'] as Record<string, Json> | undefined;
  if (!policy) throw new Error(`${platformBundleJson}: no x-retention`);
  const cell = (text: string) => text.replace(/`([^`]+)`/g, '<code>$1</code>').replace(/&(?!\w+;)/g, '&amp;');
  const rows = Object.entries(policy).map(
    ([kind, entry]) =>
      `<tr><td><code>${kind}</code>: ${cell(String(entry.description))}</td><td>${days(entry.default)}</td>` +
      `<td>${days(entry.minimum)} to ${days(entry.maximum)}</td><td><code>MINIBRIDGE_RETENTION_${kind.toUpperCase()}_DAYS</code></td></tr>`,
  );
  return [
    '<table class="lifecycle">',
    '<thead><tr><th>Record</th><th>Kept (default)</th><th>Bounds</th><th>Setting</th></tr></thead>',
    '<tbody>',
    ...rows,
    '</tbody>',
    '</table>',
  ].join('\n');
}
