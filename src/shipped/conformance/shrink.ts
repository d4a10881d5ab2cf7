import type { RequestCase } from './cases.js';
import { dotted, hasAt, memberPaths, withoutAt, type JsonPath } from '../../contract/jsonPath.js';
import type { RequestShape } from './requestShape.js';

/**
 * The smallest base that still makes the case fail: each member of the base is dropped in turn
 * (parents before children, so a whole optional object goes at once) when the base stays valid,
 * the case stays what it was (accepted or refused by the contract), and the server still fails it.
 */
export async function shrink(
  requestCase: RequestCase,
  shape: RequestShape,
  stillFails: (base: unknown) => Promise<boolean>,
): Promise<unknown> {
  let base = requestCase.base;
  const expectValid = requestCase.kind === 'positive';
  for (const path of memberPaths(base)) {
    if (!hasAt(base, path) || touchesFocus(path, requestCase.focus)) continue;
    const candidate = withoutAt(base, path);
    if (!shape.validate(candidate).valid) continue;
    if (shape.validate(requestCase.apply(candidate)).valid !== expectValid) continue;
    if (await stillFails(candidate)) base = candidate;
  }
  return base;
}

/** Whether removing `path` would remove the focus or one of its ancestors. */
function touchesFocus(path: JsonPath, focus: JsonPath | undefined): boolean {
  if (!focus) return false;
  const member = dotted(path);
  const target = dotted(focus);
  return target === member || target.startsWith(`${member}.`) || target.startsWith(`${member}[`);
}
