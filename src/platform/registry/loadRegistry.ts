import { readFileSync } from 'node:fs';
import type { ValidateFunction } from 'ajv';
import type { components } from '../../../generated/types/registry.js';
import validateRegistryModule from '../../../generated/validators/registry.js';
import { explain } from '../../contract/operations.js';
import { Registry } from './registry.js';
import { RegistryError } from './registryError.js';

export { RegistryError };

export type RegistryFile = components['schemas']['Registry'];
type Secret = components['schemas']['Secret'];

/**
 * Reads a registry file, validates it against openapi/registry.schema.yaml (filling defaults),
 * resolves `{ "env": NAME }` secrets, and checks what a schema cannot (unique ids, known host
 * apps, well-formed CIDRs). Errors name the file and the offending place.
 */
export function loadRegistry(path: string, env: NodeJS.ProcessEnv = process.env): Registry {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new RegistryError(`registry ${path}: cannot read it as JSON: ${(error as Error).message}`);
  }
  return registryFrom(raw, env, path);
}

export function registryFrom(raw: unknown, env: NodeJS.ProcessEnv = process.env, source = 'registry'): Registry {
  if (!validateRegistry(raw)) throw new RegistryError(`${source}: ${explain(validateRegistry.errors ?? [])}`);
  const file = raw as RegistryFile;
  const secret = (value: Secret, where: string): string => {
    if (typeof value === 'string') return value;
    const fromEnv = env[value.env];
    if (!fromEnv) throw new RegistryError(`${source}: ${where} names environment variable ${value.env}, which is not set`);
    return fromEnv;
  };
  return new Registry(file, secret, source);
}

/**
 * Compiled from openapi/registry.schema.yaml at build time (scripts/generate/registry-validator.ts,
 * registryAjvOptions): every error at once, defaults filled in.
 */
const validateRegistry = validateRegistryModule as ValidateFunction<RegistryFile>;
