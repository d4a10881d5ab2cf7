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

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 instant the database can keep, or null: years 0001–9999, a day the month has, no
 * leap second (23:59:60, which RFC 3339 admits but neither JavaScript nor PostgreSQL keeps).
 * A caller refuses null as a bad request; handed on, such a text would fail in the database.
 */
export function storableInstant(text: string): Date | null {
  const match = rfc3339.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !leapYear(year) ? 1 : 0);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return null;
  const instant = new Date(text);
  return Number.isNaN(instant.getTime()) || instant.getUTCFullYear() < 1 || instant.getUTCFullYear() > 9999 ? null : instant;
}

function leapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
