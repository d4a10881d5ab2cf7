/** Digit and range rules of the contract's `x-decimal` keyword (Decimal, Latitude, Longitude). */
export interface DecimalRule {
  precision: number;
  scale: number;
  minimum?: string;
  maximum?: string;
}

const DECIMAL_TEXT = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?$/;

/** A whole number as the contract's integers are written: digits only, no point, no exponent. */
export const INTEGER_TEXT = /^-?(?:0|[1-9]\d*)$/;

/**
 * Why `text` breaks `rule`, or undefined when it does not. `text` is the value as sent: a JSON
 * string's content or a JSON number's source text, judged alike, so `"-0"` and `-0`, `"1e2"` and
 * `1E2` get the same answer.
 */
export function decimalViolation(text: string, rule: DecimalRule): string | undefined {
  const match = DECIMAL_TEXT.exec(text);
  if (!match) return 'must be a plain decimal number (digits, an optional point, no exponent)';
  const [, sign, integer, fraction = ''] = match;
  if (fraction.length > rule.scale || integer.length + fraction.length > rule.precision) {
    return `must have at most ${rule.precision} digits and at most ${rule.scale} after the decimal point`;
  }
  if (rule.minimum !== undefined && compareDecimals(text, rule.minimum) < 0) return `must be at least ${rule.minimum}`;
  if (rule.maximum !== undefined && compareDecimals(text, rule.maximum) > 0) return `must be at most ${rule.maximum}`;
  // What is left with a sign is a negative zero. A range that admits no negative value admits no
  // sign either: `-0` and `-0.00` are refused as the string "-0" always was (ADR 0015).
  if (sign && rule.minimum !== undefined && !rule.minimum.startsWith('-')) return 'must be written without a sign';
  return undefined;
}

/** Compares two plain decimal strings exactly (no floating point). */
export function compareDecimals(a: string, b: string): number {
  const [signA, intA, fracA] = split(a);
  const [signB, intB, fracB] = split(b);
  if (isZero(intA, fracA) && isZero(intB, fracB)) return 0;
  if (signA !== signB) return signA === '-' ? -1 : 1;
  const magnitude = compareMagnitudes(intA, fracA, intB, fracB);
  return signA === '-' ? -magnitude : magnitude;
}

function split(text: string): [string, string, string] {
  const match = DECIMAL_TEXT.exec(text);
  if (!match) throw new TypeError(`not a plain decimal: ${text}`);
  return [match[1], match[2], match[3] ?? ''];
}

function isZero(integer: string, fraction: string): boolean {
  return /^0*$/.test(integer) && /^0*$/.test(fraction);
}

function compareMagnitudes(intA: string, fracA: string, intB: string, fracB: string): number {
  if (intA.length !== intB.length) return intA.length < intB.length ? -1 : 1;
  if (intA !== intB) return intA < intB ? -1 : 1;
  const width = Math.max(fracA.length, fracB.length);
  const a = fracA.padEnd(width, '0');
  const b = fracB.padEnd(width, '0');
  return a === b ? 0 : a < b ? -1 : 1;
}
