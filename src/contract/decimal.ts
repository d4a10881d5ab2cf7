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
  const parts = decimalParts(text);
  if (!parts) return 'must be a plain decimal number (digits, an optional point, no exponent)';
  if (parts.fraction.length > rule.scale || parts.integer.length + parts.fraction.length > rule.precision) {
    return `must have at most ${rule.precision} digits and at most ${rule.scale} after the decimal point`;
  }
  if (rule.minimum !== undefined && compareParts(parts, bound(rule.minimum)) < 0) return `must be at least ${rule.minimum}`;
  if (rule.maximum !== undefined && compareParts(parts, bound(rule.maximum)) > 0) return `must be at most ${rule.maximum}`;
  // What is left with a sign is a negative zero. A range that admits no negative value admits no
  // sign either: `-0` and `-0.00` are refused as the string "-0" always was (ADR 0015).
  if (parts.negative && rule.minimum !== undefined && !rule.minimum.startsWith('-')) return 'must be written without a sign';
  return undefined;
}

/** Compares two plain decimal strings exactly (no floating point). */
export function compareDecimals(a: string, b: string): number {
  return compareParts(split(a), split(b));
}

/** A plain decimal's sign, integer digits and fraction digits. */
interface DecimalParts {
  negative: boolean;
  integer: string;
  fraction: string;
}

function decimalParts(text: string): DecimalParts | undefined {
  const match = DECIMAL_TEXT.exec(text);
  return match ? { negative: match[1] === '-', integer: match[2]!, fraction: match[3] ?? '' } : undefined;
}

function split(text: string): DecimalParts {
  const parts = decimalParts(text);
  if (!parts) throw new TypeError(`not a plain decimal: ${text}`);
  return parts;
}

// A rule's bounds come from the contract: few and fixed, so each is split once (this runs for
// every decimal of every request).
const bounds = new Map<string, DecimalParts>();
function bound(text: string): DecimalParts {
  let parts = bounds.get(text);
  if (!parts) bounds.set(text, (parts = split(text)));
  return parts;
}

function compareParts(a: DecimalParts, b: DecimalParts): number {
  if (isZero(a) && isZero(b)) return 0;
  if (a.negative !== b.negative) return a.negative ? -1 : 1;
  const magnitude = compareMagnitudes(a.integer, a.fraction, b.integer, b.fraction);
  return a.negative && magnitude !== 0 ? -magnitude : magnitude;
}

const ZEROS = /^0*$/;
function isZero(parts: DecimalParts): boolean {
  return ZEROS.test(parts.integer) && ZEROS.test(parts.fraction);
}

function compareMagnitudes(intA: string, fracA: string, intB: string, fracB: string): number {
  if (intA.length !== intB.length) return intA.length < intB.length ? -1 : 1;
  if (intA !== intB) return intA < intB ? -1 : 1;
  const width = Math.max(fracA.length, fracB.length);
  const a = fracA.padEnd(width, '0');
  const b = fracB.padEnd(width, '0');
  return a === b ? 0 : a < b ? -1 : 1;
}
