import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ValidateFunction } from 'ajv';
import { createAjv } from '../../contract/ajv.js';
import { packageRoot } from '../../contract/documents.js';
import { validationView } from '../../contract/json.js';
import { readVectors, type Report, type RunList, type Vectors } from './vectors.js';

/**
 * The conformance kit's files as Node reads them (the sandbox, `minibridge verify bridge`): the
 * report's schema check and the shared vectors, both from the package (generated/sdk/ and
 * openapi/), so a partner's installed CLI judges with the rules it was built with.
 */

type Checked<T> = { value: T; problem?: undefined } | { problem: string; value?: undefined };

let schemaValidators: ((definition: 'Report' | 'RunList') => ValidateFunction) | undefined;

function validator(definition: 'Report' | 'RunList'): ValidateFunction {
  if (!schemaValidators) {
    const file = path.join(packageRoot(), 'generated', 'sdk', 'bridge-conformance.schema.json');
    const schema = JSON.parse(readFileSync(file, 'utf8')) as { $id: string; $defs: Record<string, never> };
    const ajv = createAjv([{ paths: {}, components: { schemas: schema.$defs } }]);
    ajv.addSchema(schema);
    schemaValidators = (name) => ajv.getSchema(`${schema.$id}#/$defs/${name}`)!;
  }
  return schemaValidators(definition);
}

/** Why value (read losslessly) is not a `definition` of bridge-conformance.schema.yaml; its plain form when it is. */
function check<T>(definition: 'Report' | 'RunList', value: unknown): Checked<T> {
  const plain = validationView(value);
  const validate = validator(definition);
  if (validate(plain)) return { value: plain as T };
  const problem = (validate.errors ?? [])
    .slice(0, 5)
    .map((error) => `${error.instancePath || '/'} ${error.message ?? error.keyword}`)
    .join('; ');
  return { problem };
}

/**
 * Why value (read losslessly) is not a Report of bridge-conformance.schema.yaml, or undefined
 * when it is; `report` is then its plain form.
 */
export function checkReport(value: unknown): { report: Report; problem?: undefined } | { problem: string; report?: undefined } {
  const checked = check<Report>('Report', value);
  return checked.problem === undefined ? { report: checked.value } : { problem: checked.problem };
}

/** The sandbox's list of runs (`$defs/RunList`), or why value is not one. */
export function checkRunList(value: unknown): Checked<RunList> {
  return check<RunList>('RunList', value);
}

let vectors: Vectors | undefined;

/** openapi/bridge.vectors.json of this package, read without losing digits. */
export function packageVectors(): Vectors {
  vectors ??= readVectors(readFileSync(path.join(packageRoot(), 'openapi', 'bridge.vectors.json'), 'utf8'));
  return vectors;
}
