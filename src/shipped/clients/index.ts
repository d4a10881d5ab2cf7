export { createHostappClient, type HostappClient } from './hostapp.js';
export { createMiniappClient, type MiniappClient } from './miniapp.js';
export { createPlatformClient, type PlatformClient } from './platform.js';
export { authorizationHeader, type ClientCredentials, type ContractClientOptions } from './client-options.js';
/** The contract's types the clients are typed by, so a client user needs no other package (also in @minibridge/contract). */
export type * as PlatformApi from '../../../generated/types/platform.js';
export type * as HostappApi from '../../../generated/types/hostapp.js';
export type * as MiniappApi from '../../../generated/types/miniapp.js';
