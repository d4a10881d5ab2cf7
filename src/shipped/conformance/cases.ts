import { decimalViolation, type DecimalRule } from '../../contract/decimal.js';
import { isLosslessNumber } from '../../contract/json.js';
import { dotted, getAt, hasAt, withoutAt, withRawAt, type JsonPath } from '../../contract/jsonPath.js';
import type { RequestShape } from './requestShape.js';

/**
 * One request to make, described by the contract: a positive case must be accepted, a negative
 * one refused. `apply` turns a valid base body into the case's body, so a failing case can be
 * shrunk by trimming the base and applying the same change again.
 */
export interface RequestCase {
  kind: 'positive' | 'negative';
  label: string;
  base: unknown;
  /** The location the case is about; shrinking never removes it, bindings never overwrite it. */
  focus?: JsonPath;
  apply(base: unknown): unknown;
}

export interface CaseOptions {
  /** Paths whose value the run fixes (identities, ids from earlier calls): no boundary values there. */
  fixedPaths: JsonPath[];
  /** A string of exactly `length` characters, unique within the run where the length allows. */
  filler(length: number): string;
}

const keep = (value: unknown) => value;

export function positiveCases(shape: RequestShape, options: CaseOptions): RequestCase[] {
  const cases: RequestCase[] = shape.examples.map((example) => ({
    kind: 'positive',
    label: `example ${example.name}`,
    base: example.value,
    apply: keep,
  }));
  if (shape.carrier === 'none') return cases;
  const isFixed = (path: JsonPath) => options.fixedPaths.some((fixed) => dotted(fixed) === dotted(path));
  for (const location of shape.locations) {
    if (isFixed(location.path)) continue;
    const base = exampleHolding(shape, location.path);
    if (base === undefined) continue;
    if (location.maxLength !== undefined && location.closedTo === undefined && location.maxLength !== Infinity) {
      const length = location.maxLength;
      cases.push(
        rawCase('positive', `${dotted(location.path)} at its limit, String(${length})`, base, location.path, () =>
          JSON.stringify(options.filler(length)),
        ),
      );
    }
    if (location.decimal) {
      for (const text of longestDecimals(location.decimal)) {
        const digits = text.replace(/\D/g, '').length;
        cases.push(
          rawCase('positive', `${dotted(location.path)} with ${digits} digits as a string (${text})`, base, location.path, () =>
            JSON.stringify(text),
          ),
        );
        cases.push(
          rawCase('positive', `${dotted(location.path)} with ${digits} digits as a number (${text})`, base, location.path, () => text),
        );
      }
    }
  }
  return cases.filter((candidate) => shape.validate(candidate.apply(candidate.base)).valid);
}

export function negativeCases(shape: RequestShape, options: CaseOptions): RequestCase[] {
  if (shape.carrier === 'none') return [];
  const cases: RequestCase[] = [];
  for (const location of shape.locations) {
    for (const name of location.required) {
      const path = [...location.path, name];
      const base = exampleHolding(shape, path);
      if (base === undefined) continue;
      cases.push({
        kind: 'negative',
        label: `required ${dotted(path)} missing`,
        base,
        focus: path,
        apply: (value) => withoutAt(value, path),
      });
    }
  }
  for (const location of shape.locations) {
    if (location.path.length === 0) continue;
    const base = exampleHolding(shape, location.path);
    if (base === undefined) continue;
    const label = dotted(location.path);
    if (shape.carrier === 'body') {
      const wrong = wrongType(shape, base, location.path);
      if (wrong) cases.push(rawCase('negative', `${label} of the wrong type (${wrong})`, base, location.path, () => wrong));
    }
    if (location.closedTo) {
      cases.push(
        rawCase('negative', `${label} outside its documented values`, base, location.path, () =>
          JSON.stringify(options.filler(Math.min(location.maxLength ?? 24, 24))),
        ),
      );
    } else if (location.maxLength !== undefined) {
      const length = location.maxLength + 1;
      cases.push(
        rawCase('negative', `${label} over its limit, String(${location.maxLength}) + 1`, base, location.path, () =>
          JSON.stringify(options.filler(length)),
        ),
      );
    }
    if (location.decimal) {
      for (const { text, why } of brokenDecimals(location.decimal)) {
        if (shape.carrier === 'body')
          cases.push(rawCase('negative', `${label} ${why} as a number (${text})`, base, location.path, () => text));
        cases.push(rawCase('negative', `${label} ${why} as a string (${text})`, base, location.path, () => JSON.stringify(text)));
      }
    }
    if (location.integerMinimum !== undefined) {
      const below = String(location.integerMinimum - 1);
      cases.push(rawCase('negative', `${label} below its minimum ${location.integerMinimum} (${below})`, base, location.path, () => below));
    }
  }
  // A case the contract's own validator accepts is no negative case (e.g. a conditional `then`).
  return cases.filter((candidate) => !shape.validate(candidate.apply(candidate.base)).valid);
}

function rawCase(kind: RequestCase['kind'], label: string, base: unknown, path: JsonPath, raw: () => string): RequestCase {
  return { kind, label, base, focus: path, apply: (value) => withRawAt(value, path, raw()) };
}

/** The first example whose value holds the parent of `path`, so the case changes one thing only. */
function exampleHolding(shape: RequestShape, path: JsonPath): unknown {
  const parent = path.slice(0, -1);
  return (
    shape.examples.find((example) => hasAt(example.value, path))?.value ??
    shape.examples.find((example) => isObject(getAt(example.value, parent)))?.value
  );
}

function isObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !isLosslessNumber(value);
}

const WRONG_TYPES = ['12345', 'true', '"text"', '{}', '[]'];

/** A JSON value of another type than the example's that the contract refuses at `path`. */
function wrongType(shape: RequestShape, base: unknown, path: JsonPath): string | undefined {
  const current = getAt(base, path);
  const kind = (value: unknown) =>
    isLosslessNumber(value) || typeof value === 'number'
      ? 'number'
      : Array.isArray(value)
        ? 'array'
        : value === null
          ? 'null'
          : typeof value;
  return WRONG_TYPES.find((raw) => {
    const candidate = withRawAt(base, path, raw);
    return kind(getAt(candidate, path)) !== kind(current) && !shape.validate(candidate).valid;
  });
}

const DIGITS = '12345678901234567890123456789012345678901234567890';

/** The longest values the rule allows: all digits before the point, and all digits with the full scale. */
export function longestDecimals(rule: DecimalRule): string[] {
  const integerOnly = DIGITS.slice(0, rule.precision);
  const withScale = `${DIGITS.slice(0, rule.precision - rule.scale)}.${DIGITS.slice(0, rule.scale)}`;
  return [integerOnly, withScale].filter((text) => decimalViolation(text, rule) === undefined);
}

/** Values one step past each limit of the rule: one digit too many, one decimal too many, out of range. */
export function brokenDecimals(rule: DecimalRule): Array<{ text: string; why: string }> {
  const broken = [
    { text: DIGITS.slice(0, rule.precision + 1), why: `with ${rule.precision + 1} digits` },
    { text: `1.${DIGITS.slice(0, rule.scale + 1)}`, why: `with ${rule.scale + 1} decimals` },
  ];
  if (rule.minimum !== undefined)
    broken.push({ text: String(BigInt(rule.minimum.split('.')[0]!) - 1n), why: `below its minimum ${rule.minimum}` });
  if (rule.maximum !== undefined)
    broken.push({ text: String(BigInt(rule.maximum.split('.')[0]!) + 1n), why: `above its maximum ${rule.maximum}` });
  return broken.filter(({ text }) => decimalViolation(text, rule) !== undefined);
}
