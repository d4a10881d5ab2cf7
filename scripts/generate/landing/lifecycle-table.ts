import { readFile } from 'node:fs/promises';
import { parse } from 'lossless-json';

/** The marker a guide puts on a line of its own where the payment lifecycle's figures belong. */
export const lifecycleTableMarker = '<!-- generated: lifecycle-table -->';

type Json = Record<string, unknown>;

/** Milliseconds or seconds as a reader says them: 90 s, 30 min, 6 h, 7 days. */
function duration(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'days'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1_000, 's'],
  ];
  for (const [size, unit] of units)
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit === 'days' && ms === size ? 'day' : unit}`;
  return `${ms} ms`;
}

function number(value: unknown): number {
  const parsed = Number(String(value));
  if (!Number.isFinite(parsed)) throw new Error(`the payment lifecycle table expected a number, got ${String(value)}`);
  return parsed;
}

/**
 * The payment lifecycle's published figures (ADR 0039), read from the bundled documents: the
 * host app settings' defaults and bounds (the Platform API's HostappSettingsFields) and the
 * reconciliation schedule and caps (`x-reconciliation` on the Host App API's E4). The guide never
 * copies them.
 */
export async function renderLifecycleTable(platformBundleJson: string, hostappBundleJson: string): Promise<string> {
  const platform = parse(await readFile(platformBundleJson, 'utf8')) as Json;
  const hostapp = parse(await readFile(hostappBundleJson, 'utf8')) as Json;
  const schemas = (platform.components as Json).schemas as Record<string, Json>;
  const fields = schemas.HostappSettingsFields!.properties as Record<string, Json>;
  const setting = (name: string) => {
    const property = fields[name]!;
    const target = schemas[String(property.$ref).split('/').pop()!]!;
    return { default: number(property.default) * 1000, minimum: number(target.minimum) * 1000, maximum: number(target.maximum) * 1000 };
  };
  const e4 = ((hostapp.paths as Record<string, Json>)['/get-payment-status'] as Json).post as Json;
  const policy = e4['x-reconciliation'] as Json;
  if (!policy) throw new Error(`${hostappBundleJson}: E4 has no x-reconciliation`);
  const backoff = policy.backoff as Json;
  const stuck = policy.stuck as Json;
  const hostappBackoff = policy.hostappBackoff as Json;
  const lifetime = setting('payment_lifetime_seconds');
  const reconcile = setting('reconcile_after_seconds');
  const percent = (value: unknown) => `±${Math.round(number(value) * 100)} %`;
  const rows: Array<[string, string]> = [
    [
      'Payment lifetime (`payment_lifetime_seconds`)',
      `${duration(lifetime.default)} unless the host app sets it, from ${duration(lifetime.minimum)} to ${duration(lifetime.maximum)}; a miniapp may ask for a shorter one on E1`,
    ],
    [
      'First ask without an E5 (`reconcile_after_seconds`)',
      `${duration(reconcile.default)} after creation unless the host app sets it, from ${duration(reconcile.minimum)} to ${duration(reconcile.maximum)}`,
    ],
    [
      'Asks before expiry',
      `then ${duration(number(backoff.firstDelayMs))} later, ×${number(backoff.multiplier)} each time up to ${duration(number(backoff.maxDelayMs))}, ${percent(backoff.jitter)}`,
    ],
    ['The at-expiry ask', `${duration(number(policy.expiryGraceMs))} after \`expires_at\`; still \`in_process\` then: stuck`],
    [
      'No answer at expiry',
      `asked again after the time since the at-expiry ask, at least ${duration(number(backoff.firstDelayMs))} and at most ${duration(number(backoff.maxDelayMs))} (${percent(backoff.jitter)}); unanswered for ${duration(number(stuck.intervalMs))}: stuck`,
    ],
    [
      'Asks while stuck',
      `every ${duration(number(stuck.intervalMs))} (${percent(stuck.jitter)}) until ${duration(number(stuck.horizonMs))} after \`expires_at\`, then none`,
    ],
    ['Asks open to one host app', `at most ${number(policy.maxInFlight)}, across all platform instances`],
    ['Asks started per host app', `at most ${number(policy.perSecond)} per second, across all platform instances`],
    [
      'A host app that does not answer',
      `left alone for up to ${duration(number(hostappBackoff.firstDelayMs))}, doubling to ${duration(number(hostappBackoff.maxDelayMs))}, with jitter`,
    ],
  ];
  const cell = (text: string) => text.replace(/`([^`]+)`/g, '<code>$1</code>');
  return [
    '<table class="lifecycle">',
    '<thead><tr><th>What</th><th>Figure (from the contract)</th></tr></thead>',
    '<tbody>',
    ...rows.map(([what, figure]) => `<tr><td>${cell(what)}</td><td>${cell(figure)}</td></tr>`),
    '</tbody>',
    '</table>',
  ].join('\n');
}
