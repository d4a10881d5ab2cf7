export { createHostappClient, type HostappClient } from './hostapp.js';
export { createMiniappClient, type MiniappClient } from './miniapp.js';
export { createPlatformClient, type PlatformClient } from './platform.js';
export { authorizationHeader, type ClientCredentials, type ContractClientOptions } from './client-options.js';
