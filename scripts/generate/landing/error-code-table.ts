import { readFile } from 'node:fs/promises';
import { parse } from 'lossless-json';
import { marked } from 'marked';

/** The marker a guide puts on a line of its own where the error-code table belongs. */
export const errorCodeTableMarker = '<!-- generated: error-code-table -->';

interface ErrorCodeSchema {
  enum: string[];
  'x-enumDescriptions': Record<string, string>;
  'x-retryable': string[];
}

function isErrorCodeSchema(value: unknown): value is ErrorCodeSchema {
  const schema = value as Partial<ErrorCodeSchema> | undefined;
  return Array.isArray(schema?.enum) && typeof schema['x-enumDescriptions'] === 'object' && Array.isArray(schema['x-retryable']);
}

/** Reads the ErrorCode schema from the bundled platform document: the one catalogue of codes. */
export async function readErrorCodes(platformBundleJson: string): Promise<ErrorCodeSchema> {
  const document = parse(await readFile(platformBundleJson, 'utf8')) as { components?: { schemas?: Record<string, unknown> } };
  const schema = document.components?.schemas?.['ErrorCode'];
  if (!isErrorCodeSchema(schema)) {
    throw new Error(`${platformBundleJson}: components.schemas.ErrorCode needs enum, x-enumDescriptions and x-retryable`);
  }
  for (const code of schema.enum) {
    if (!schema['x-enumDescriptions'][code]) throw new Error(`ErrorCode ${code} has no x-enumDescriptions entry`);
  }
  for (const code of schema['x-retryable']) {
    if (!schema.enum.includes(code)) throw new Error(`x-retryable lists ${code}, which is not in the ErrorCode enum`);
  }
  return withDashboardCodes(schema, document.components?.schemas?.['DashboardErrorCode']);
}

/**
 * The Dashboard API's own codes (DashboardErrorCode: ErrorCode, and an enum of codes only the
 * dashboard answers, each described in its x-enumDescriptions) appended to the table.
 */
function withDashboardCodes(schema: ErrorCodeSchema, dashboard: unknown): ErrorCodeSchema {
  const own = dashboard as { anyOf?: Array<{ enum?: unknown }>; 'x-enumDescriptions'?: Record<string, string> } | undefined;
  const codes = (own?.anyOf ?? []).flatMap((branch) =>
    Array.isArray(branch.enum) ? branch.enum.filter((code) => typeof code === 'string') : [],
  );
  for (const code of codes)
    if (!own?.['x-enumDescriptions']?.[code]) throw new Error(`DashboardErrorCode ${code} has no x-enumDescriptions entry`);
  return {
    ...schema,
    enum: [...schema.enum, ...codes],
    'x-enumDescriptions': { ...schema['x-enumDescriptions'], ...own?.['x-enumDescriptions'] },
  };
}

export function renderErrorCodeTable(schema: ErrorCodeSchema): string {
  const rows = schema.enum.map((code) => {
    const retryable = schema['x-retryable'].includes(code);
    const meaning = marked.parseInline(schema['x-enumDescriptions'][code] ?? '', { async: false });
    return `<tr id="error-${code}"><td><code>${code}</code></td><td class="${retryable ? 'retry-yes' : 'retry-no'}">${retryable ? 'yes' : 'no'}</td><td>${meaning}</td></tr>`;
  });
  return [
    '<table class="error-codes">',
    '<thead><tr><th>error_code</th><th>Retry?</th><th>Meaning</th></tr></thead>',
    '<tbody>',
    ...rows,
    '</tbody>',
    '</table>',
  ].join('\n');
}
