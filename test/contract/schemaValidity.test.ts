/**
 * The contract's component schemas are valid JSON Schema 2020-12. The platform no longer checks
 * this at start-up (compiling the meta-schema was the largest part of it, ADR 0026), so the suite
 * does.
 */
import { describe, expect, it } from 'vitest';
import { createAjv } from '../../src/contract/ajv.js';
import { contractSchemaProblems } from '../../src/contract/operations.js';

describe('contract component schemas', () => {
  it('are valid against the JSON Schema 2020-12 meta-schema', () => {
    expect(contractSchemaProblems()).toEqual([]);
  });

  it('the check refuses a schema the meta-schema refuses', () => {
    expect(createAjv([]).validateSchema({ $defs: { Amount: { type: 'decimal' } } })).toBe(false);
  });
});
