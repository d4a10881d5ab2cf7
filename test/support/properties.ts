/**
 * Every fast-check run is seeded, so a failure seen once is seen again. Each property gets its
 * own seed derived from its name and PROPERTY_SEED (set it to vary or reproduce a run; the hostile
 * and fuzz suites have their own, HOSTILE_SEED and FUZZ_SEED).
 */
export const PROPERTY_SEED = Number(process.env.PROPERTY_SEED ?? 20261124);

/** fast-check parameters for the property `name`: a fixed seed and the number of runs. */
export function propertyRunOptions(name: string, numRuns: number): { seed: number; numRuns: number } {
  const hash = [...name].reduce((sum, char) => (Math.imul(sum, 31) + char.charCodeAt(0)) | 0, 0);
  return { seed: PROPERTY_SEED ^ hash, numRuns };
}
