import { dotted } from './jsonPath.js';
import { mayHoldUnstorableText, maxJsonDepth, readLossless, scanJson, unstorableText, type LosslessRead } from './json.js';
import { check, type OperationContract } from './operations.js';

/**
 * Why an inbound body cannot be read. The caller answers with its own invalid-input error: the
 * platform with the operation's 400 code, the partner kit with the operation's `invalidRequest`
 * code (HTTP 200). The message is written for the partner who sent the body.
 */
export class InboundRefusal extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The one reader of inbound JSON bodies, shared by the platform's operations and the partner
 * kit's routers (ADR 0015). It returns exactly what was sent, as own data properties of plain
 * objects, or refuses:
 * - bytes that are not UTF-8, an empty body, text that is not JSON;
 * - a member name that appears twice in one object (`{"a":1,"a":2}`): readers disagree on which
 *   one counts, so a payments platform takes neither;
 * - a member named `__proto__` at any depth: JSON.parse keeps it as data, but `obj[key] = value`,
 *   spread and most copies anywhere downstream (ours or a partner's) turn it into the object's
 *   prototype, so the body would mean different things to different readers;
 * - objects and arrays nested deeper than `x-max-json-depth`, checked before anything recursive
 *   reads the text (a deeper body would exhaust the stack of the parser, the validator or the store);
 * - U+0000 or a lone UTF-16 surrogate (`"\ud800"`) in any string or member name, which
 *   PostgreSQL cannot store and UTF-8 cannot carry.
 * Numbers stay exact (lossless-json): money never passes through a float.
 */
export function parseInboundJson(raw: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new InboundRefusal('the body is not valid UTF-8');
  }
  if (text.trim() === '') throw new InboundRefusal('the body is empty; a JSON object is required');
  // One scan before anything recursive reads the text: its depth, and what readLossless needs.
  const scan = scanJson(text, { depthLimit: maxJsonDepth() });
  if (scan.tooDeep) throw new InboundRefusal(`objects and arrays must not be nested more than ${maxJsonDepth()} deep`);
  let read: LosslessRead;
  try {
    read = readLossless(text, scan);
  } catch (error) {
    const message = (error as Error).message;
    // lossless-json refuses a repeated member with a different value itself (the text up to it
    // is well-formed); the scan names where it is, as it does for a repeat with the same value.
    const repeat = message.startsWith('Duplicate key') ? firstAmbiguousMember(text) : undefined;
    throw new InboundRefusal(repeat ?? `the body is not valid JSON: ${message}`);
  }
  const { value, distinctNames } = read;
  // A read that proved the names distinct (and none __proto__) leaves the scan nothing to find.
  const ambiguous = distinctNames ? undefined : firstAmbiguousMember(text);
  if (ambiguous) throw new InboundRefusal(ambiguous);
  // UTF-8 JSON can only carry U+0000 or a lone surrogate as an escape, so most bodies skip the walk.
  const unstorable = mayHoldUnstorableText(text) ? unstorableText(value) : undefined;
  if (unstorable) throw new InboundRefusal(unstorable);
  return value;
}

/**
 * Reads a body with parseInboundJson and validates it against the operation's request body
 * schema: what the validator sees and what the handler gets are the same own properties.
 */
export function readInboundBody(op: OperationContract, raw: Uint8Array): unknown {
  const value = parseInboundJson(raw);
  if (op.validateBody) {
    const result = check(op.validateBody, value);
    if (!result.valid) throw new InboundRefusal(result.message);
  }
  return value;
}

/**
 * The first member name that appears twice in one object, or a `__proto__` member, as a message;
 * undefined when there is none (scanJson, names compared after unescaping).
 */
export function firstAmbiguousMember(text: string): string | undefined {
  const found = scanJson(text, { names: true }).ambiguous;
  if (!found) return undefined;
  return found.problem === '__proto__'
    ? `${dotted(found.path)}: a member named __proto__ is not accepted (it would set the object's prototype in many JSON readers)`
    : `${dotted(found.path)} appears more than once in the same object; send each member once`;
}
