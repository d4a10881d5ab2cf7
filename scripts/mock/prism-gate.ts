import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createLogger } from '@stoplight/prism-core';
import { createInstance, getHttpOperationsFromSpec, type IHttpConfig, type IHttpRequest } from '@stoplight/prism-http';
import type { HttpMethod, IHttpOperation } from '@stoplight/types';
import { packageRoot, type ApiName } from '../../src/contract/documents.js';

// Prism's router is not re-exported from the package root; the mock needs it to learn which
// operation a request hits (and which methods a path allows, for 405's Allow header).
const require = createRequire(import.meta.url);
const route = (require('@stoplight/prism-http/dist/router/index.js') as { default: PrismRoute }).default;
type PrismRoute = (options: { resources: IHttpOperation[]; input: IHttpRequest }) => Either<Error, IHttpOperation>;
type Either<L, R> = { _tag: 'Left'; left: L } | { _tag: 'Right'; right: R };

const METHODS: HttpMethod[] = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

// Prism decides routing, security and parameters; it serves nothing itself (the mock picks the
// contract's examples), so dynamic mocking and response validation stay off.
const config: IHttpConfig = {
  mock: { dynamic: false },
  validateRequest: true,
  checkSecurity: true,
  validateResponse: false,
  errors: false,
  isProxy: false,
  upstreamProxy: undefined,
};

export type GateVerdict =
  | { kind: 'noRoute' }
  | { kind: 'methodNotAllowed'; allow: string[] }
  | { kind: 'operation'; operationId: string; securityViolations: string[]; parameterViolations: string[] };

export interface PrismGate {
  inspect(request: IHttpRequest): Promise<GateVerdict>;
}

/**
 * Prism (5.x) on the bundled document, used as a gate: which operation a request reaches, and
 * what Prism finds wrong with its security and parameters. Bodies are judged by the contract's
 * own validators instead (Prism cannot see the `x-decimal` digit rules).
 */
export async function createPrismGate(api: ApiName): Promise<PrismGate> {
  const operations = await getHttpOperationsFromSpec(join(packageRoot(), 'generated', 'openapi', `${api}.json`));
  const logger = createLogger(`mock:${api}`, { level: 'silent' });
  const prism = createInstance(config, { logger });

  return {
    async inspect(request): Promise<GateVerdict> {
      const routed = route({ resources: operations, input: request });
      if (routed._tag === 'Left') {
        const allow = METHODS.filter((method) => route({ resources: operations, input: { ...request, method } })._tag === 'Right');
        return allow.length > 0 ? { kind: 'methodNotAllowed', allow: allow.map((method) => method.toUpperCase()) } : { kind: 'noRoute' };
      }
      const outcome = await prism.request(request, operations, config)();
      // getHttpOperationsFromSpec sets iid to the operationId.
      return { kind: 'operation', operationId: String(routed.right.iid), ...violations(outcome) };
    },
  };
}

interface PrismViolation {
  path?: string[];
  location?: string[];
  code?: string | number;
  message: string;
}

function violations(
  outcome: Either<
    Error & { status?: number; additional?: { validation?: PrismViolation[] } },
    { validations: { input: PrismViolation[] } }
  >,
): {
  securityViolations: string[];
  parameterViolations: string[];
} {
  const securityViolations: string[] = [];
  const parameterViolations: string[] = [];
  let found: PrismViolation[];
  if (outcome._tag === 'Left') {
    // 401: security failed on an operation without a documented 401; 422: invalid input. Other
    // failures are about Prism building a response, which the mock does not use.
    if (outcome.left.status === 401) securityViolations.push(outcome.left.message);
    found = outcome.left.status === 422 ? (outcome.left.additional?.validation ?? []) : [];
  } else {
    found = outcome.right.validations.input;
  }
  for (const violation of found) {
    const where = violation.path ?? violation.location ?? [];
    // Body violations (and Prism's location-less "Body parameter is required") are left to the
    // contract's validators.
    if (violation.code === 401) securityViolations.push(violation.message);
    else if (where.length > 0 && where[0] !== 'body') parameterViolations.push(violation.message);
  }
  return { securityViolations, parameterViolations };
}
