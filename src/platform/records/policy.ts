import type { components } from '../../../generated/types/platform.js';
import { retentionBounds, retentionKinds, retentionSetting, type RetentionKind } from '../../contract/records.js';

/** The retention period in force for each kind of record, in days (ADR 0041). */
export type RetentionPeriods = Record<RetentionKind, number>;

const PREFIX = 'MINIBRIDGE_RETENTION_';

/**
 * The periods from the environment, each `MINIBRIDGE_RETENTION_<KIND>_DAYS` within the contract's
 * bounds, the contract's default otherwise. A variable with the prefix that names no kind (a
 * misspelling) or a value out of bounds stops the start: a privacy setting silently ignored would
 * keep data longer than the operator decided.
 */
export function retentionFromEnv(env: NodeJS.ProcessEnv): RetentionPeriods {
  const bounds = retentionBounds();
  const known = new Map(retentionKinds.map((kind) => [retentionSetting(kind), kind]));
  for (const name of Object.keys(env))
    if (name.startsWith(PREFIX) && !known.has(name))
      throw new Error(`${name} is not a retention setting; the settings are ${[...known.keys()].join(', ')}`);
  const periods = {} as RetentionPeriods;
  for (const kind of retentionKinds) {
    const name = retentionSetting(kind);
    const text = env[name];
    const { minimum, maximum } = bounds[kind];
    if (text === undefined || text === '') {
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
