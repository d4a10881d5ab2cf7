import { expect } from 'vitest';
import { parseLossless } from '../../src/contract/json.js';
import { check, operation } from '../../src/contract/operations.js';

/**
 * Checks one answer of a platform operation against the contract: its status is one the
 * operation documents (404 and 405 also pass for a path the test made up, `httpLevel`), and a
 * JSON answer's body matches that status's schema. Returns the body as plain values (exact
 * digits are asserted on the text).
 */
export function expectContractAnswer(
  operationId: string,
  answer: { status: number; contentType: string | null; text: string },
  options: { httpLevel?: boolean } = {},
): unknown {
  const op = operation(operationId);
  const documented = op.responses.get(String(answer.status));
  const isHttpLevel = [404, 405].includes(answer.status) && options.httpLevel === true;
  expect(documented !== undefined || isHttpLevel, `${operationId} answered undocumented status ${answer.status}: ${answer.text}`).toBe(
    true,
  );
  if (documented?.contentType !== 'application/json' && !isHttpLevel) return undefined;
  expect(answer.contentType, `${operationId} ${answer.status} content type`).toMatch(/^application\/json/);
  const validate = documented?.validate ?? operation('createOrderPayment').responses.get('400')!.validate!;
  const verdict = check(validate, contractView(answer.text));
  expect(
    verdict.valid,
    `${operationId} ${answer.status} body breaks the contract: ${verdict.valid ? '' : verdict.message}: ${answer.text}`,
  ).toBe(true);
  return JSON.parse(answer.text);
}

/**
 * The answer as the contract check sees it: read without loss, or, for a forwarded E7 answer that
 * names a member twice (passed on byte for byte, ADR 0016), by JSON.parse's last-name-wins reading.
 */
function contractView(text: string): unknown {
  try {
    return parseLossless(text);
  } catch (error) {
    if (error instanceof SyntaxError && error.message.startsWith('Duplicate key')) return JSON.parse(text);
    throw error;
  }
}
