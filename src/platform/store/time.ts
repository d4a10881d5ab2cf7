/**
 * The store never reads the database clock: every time it writes or compares comes from this
 * function, so one clock rules all instances' decisions and tests can move time by hand.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export function addMs(date: Date, ms: number): Date {
  return new Date(date.getTime() + ms);
}

export function isoOrNull(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}
