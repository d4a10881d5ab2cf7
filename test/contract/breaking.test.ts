import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApis } from '../../scripts/lib/apis.js';
import { checkBreakingChanges } from '../../scripts/lib/breaking-changes.js';
import { baselineDir } from '../../scripts/lib/paths.js';
import { parseLossless, stringifyLossless } from '../../src/contract/json.js';

// The gate of `npm run check:breaking`, run on edited copies of the platform document so it is
// seen to fail on breaking edits and to pass on the released contract and on additive edits.
// That the generated documents pass it is `npm run check:breaking` itself, a step of `npm test`
// beside vitest (and of CI): running optic over all three documents again here proved nothing
// more, nor did an unchanged copy (the additive edit passing shows the gate passes what it should).
type Schemas = Record<string, { required?: string[]; properties?: Record<string, unknown> }>;
type Edit = (schemas: Schemas) => void;

const platform = listApis().filter((api) => api.name === 'platform');
const timeout = 60_000;
let workDir: string;

async function checkEditedPlatform(edit: Edit): Promise<{ outcome: string; report: string }> {
  const document = parseLossless(await readFile(path.join(baselineDir, 'platform.json'), 'utf8')) as { components: { schemas: Schemas } };
  edit(document.components.schemas);
  const dir = await mkdtemp(path.join(workDir, 'edit-'));
  await writeFile(path.join(dir, 'platform.json'), stringifyLossless(document));
  const [result] = await checkBreakingChanges(platform, baselineDir, dir);
  return { outcome: result?.outcome ?? 'missing', report: result?.report ?? '' };
}

function schema(schemas: Schemas, name: string): NonNullable<Schemas[string]> {
  const found = schemas[name];
  if (!found?.properties) throw new Error(`the platform document has no object schema ${name}; pick another for this test`);
  return found;
}

describe('npm run check:breaking (optic against openapi/baseline/)', () => {
  beforeAll(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'minibridge-breaking-'));
  });
  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it(
    'passes for an additive change (a new optional response property)',
    async () => {
      const { outcome } = await checkEditedPlatform((schemas) => {
        schema(schemas, 'CreateOrderPaymentResponse').properties!['created_at'] = { type: 'string' };
      });
      expect(outcome).toBe('compatible');
    },
    timeout,
  );

  // Both breaking edits in one document, one optic run: each must be reported under its own rule,
  // so a gate that missed either kind fails here as surely as with a run per edit.
  it(
    'fails when an optional request field becomes required, and when a response property is removed, naming each',
    async () => {
      const { outcome, report } = await checkEditedPlatform((schemas) => {
        const request = schema(schemas, 'CompleteOrderRequest');
        expect(request.required).not.toContain('payment_fail_reason');
        request.required = [...(request.required ?? []), 'payment_fail_reason'];
        const response = schema(schemas, 'CreateOrderPaymentResponse');
        delete response.properties!['order_payment_id'];
        response.required = (response.required ?? []).filter((name) => name !== 'order_payment_id');
      });
      expect(outcome).toBe('breaking');
      expect(report).toMatch(/properties\/payment_fail_reason: changed\s+x \[prevent changing request property to required\]/);
      expect(report).toMatch(/\[prevent removing response property\] cannot remove response property 'order_payment_id'/);
    },
    timeout,
  );
});
