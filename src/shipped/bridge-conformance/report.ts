import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ValidateFunction } from 'ajv';
import { createAjv } from '../../contract/ajv.js';
import { packageRoot } from '../../contract/documents.js';
import { validationView } from '../../contract/json.js';
import { readVectors, type Report, type Vectors } from './vectors.js';

/**
 * The conformance kit's files as Node reads them (the sandbox, `minibridge verify bridge`): the
 * report's schema check and the shared vectors, both from the package (generated/sdk/ and
 * openapi/), so a partner's installed CLI judges with the rules it was built with.
 */

let reportValidator: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (!reportValidator) {
    const file = path.join(packageRoot(), 'generated', 'sdk', 'bridge-conformance.schema.json');
    const schema = JSON.parse(readFileSync(file, 'utf8')) as { $id: string; $defs: Record<string, never> };
    const ajv = createAjv([{ paths: {}, components: { schemas: schema.$defs } }]);
    ajv.addSchema(schema);
    reportValidator = ajv.getSchema(`${schema.$id}#/$defs/Report`)!;
  }
  return reportValidator;
}

/**
 * Why value (read losslessly) is not a Report of bridge-conformance.schema.yaml, or undefined
 * when it is; `report` is then its plain form.
 */
export function checkReport(value: unknown): { report: Report; problem?: undefined } | { problem: string; report?: undefined } {
  const plain = validationView(value);
  const validate = validator();
  if (validate(plain)) return { report: plain as Report };
  const problem = (validate.errors ?? [])
    .slice(0, 5)
    .map((error) => `${error.instancePath || '/'} ${error.message ?? error.keyword}`)
    .join('; ');
  return { problem };
}

let vectors: Vectors | undefined;

/** openapi/bridge.vectors.json of this package, read without losing digits. */
export function packageVectors(): Vectors {
  vectors ??= readVectors(readFileSync(path.join(packageRoot(), 'openapi', 'bridge.vectors.json'), 'utf8'));
  return vectors;
}
