import * as generated from '../../../generated/sdk/bridge-validators.js';

/** One schema violation, as ajv reports it. */
export interface SchemaViolation {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

type GeneratedValidator = ((data: unknown) => boolean) & { errors?: SchemaViolation[] | null };

/** The bridge schema's message definitions that have a compiled validator. */
export type ValidatedDefinition =
  'Envelope' | 'PayRequest' | 'PayResult' | 'CustomEventRequest' | 'CustomEventResult' | 'HostEvent' | 'BridgeError';

// The standalone validators module is generated JavaScript without types: one export per definition.
const validators = generated as unknown as Record<ValidatedDefinition, GeneratedValidator>;

export type ValidationResult = { ok: true } | { ok: false; violations: SchemaViolation[] };

/**
 * Checks a message against `$defs/<definition>` of openapi/bridge.schema.yaml, with validators
 * compiled from it at build time (scripts/build-sdk.ts), so the SDK carries no validator library.
 */
export function validateMessage(definition: ValidatedDefinition, message: unknown): ValidationResult {
  const validate = validators[definition];
  if (validate(message)) return { ok: true };
  return { ok: false, violations: [...(validate.errors ?? [])] };
}

/** A one-line account of the violations, e.g. `/paymentData/currency must NOT have more than 20 characters`. */
export function describeViolations(violations: readonly SchemaViolation[]): string {
  return violations
    .map((violation) => {
      const extra = violation.params.additionalProperty;
      return `${violation.instancePath || '/'} ${violation.message ?? violation.keyword}${typeof extra === 'string' ? `: ${extra}` : ''}`;
    })
    .join('; ');
}
