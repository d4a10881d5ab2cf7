import type { components } from '../../../generated/types/platform.js';
import { retentionBounds, retentionKinds, retentionSetting, type RetentionKind } from '../../contract/records.js';

/** The retention period in force for each kind of record, in days (ADR 0041). */
export type RetentionPeriods = Record<RetentionKind, number>;

/** A name meant as a retention setting: `MINIBRIDGE_RETENTION_…`, however cased or misspelt (RETENTON, RETAIN). */
const retentionLike = /^MINIBRIDGE_RET(?:EN|AIN)/i;

/**
 * The periods from the environment, each `MINIBRIDGE_RETENTION_<KIND>_DAYS` within the contract's
 * bounds, the contract's default otherwise. A variable with the prefix that names no kind (a
 * misspelling) or a value out of bounds stops the start: a privacy setting silently ignored would
 * keep data longer than the operator decided.
 */
export function retentionFromEnv(env: NodeJS.ProcessEnv): RetentionPeriods {
  const bounds = retentionBounds();
  const known = new Map(retentionKinds.map((kind) => [retentionSetting(kind), kind]));
  // Any MINIBRIDGE_ name about retention, in any case and with the prefix misspelt, must be one of them.
  for (const name of Object.keys(env))
    if (retentionLike.test(name) && !known.has(name))
      throw new Error(`${name} is not a retention setting; the settings are ${[...known.keys()].join(', ')}`);
  const periods = {} as RetentionPeriods;
  for (const kind of retentionKinds) {
    const name = retentionSetting(kind);
    const text = env[name];
    const { minimum, maximum } = bounds[kind];
    // Unset is the default; set empty (a template's missing value) is a mistake, refused like any other.
    if (text === undefined) {
      periods[kind] = bounds[kind].default;
      continue;
    }
    if (!/^\d{1,5}$/.test(text) || Number(text) < minimum || Number(text) > maximum)
      throw new Error(`${name}=${text}: expected a whole number of days from ${minimum} to ${maximum} (x-retention.${kind})`);
    periods[kind] = Number(text);
  }
  return periods;
}

/** The retention periods in force, with the contract's defaults and bounds (ADR 0041). */
export function retentionPolicy(periods: RetentionPeriods): components['schemas']['RetentionPolicy'] {
  const bounds = retentionBounds();
  return {
    periods: retentionKinds.map((kind) => ({
      kind,
      days: periods[kind],
      default_days: bounds[kind].default,
      minimum_days: bounds[kind].minimum,
      maximum_days: bounds[kind].maximum,
      setting: retentionSetting(kind),
    })),
  };
}
