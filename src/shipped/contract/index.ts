/**
 * `@minibridge/contract`: the contract's generated types, one namespace per API
 * (`PlatformApi.components['schemas']['GetPaymentStatusResponse']`, `paths`, `operations`), and
 * the names of the APIs. The bundled documents themselves are the package's
 * `@minibridge/contract/openapi/<api>.json` (and `.yaml`). Types only: nothing here runs (ADR 0042).
 */
export type * as PlatformApi from '../../../generated/types/platform.js';
export type * as HostappApi from '../../../generated/types/hostapp.js';
export type * as MiniappApi from '../../../generated/types/miniapp.js';
export { API_NAMES } from '../../../generated/types/apis.js';
