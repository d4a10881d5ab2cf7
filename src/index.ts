export * from './clients/index.js';
export type * as PlatformApi from '../generated/types/platform.js';
export type * as HostappApi from '../generated/types/hostapp.js';
export type * as MiniappApi from '../generated/types/miniapp.js';
export * from './partner-kit/index.js';
export { startSandbox, sandboxRegistry, SANDBOX_HOSTAPP, SANDBOX_MINIAPP, SANDBOX_SIGNING_SECRETS, type RunningSandbox, type SandboxOptions } from './sandbox/startSandbox.js';
export { MAGIC_AMOUNTS, magicAmountsTable } from './sandbox/magicAmounts.js';

/** The miniapp JS SDK and the host side of the bridge (the docs' guide "Native bridge", `/docs/#native-bridge`). */
export * as MinibridgeSdk from './sdk/index.js';

/** The conformance kit behind `minibridge verify` (the docs' onboarding guide, `/docs/#onboarding`). */
export { verify, tableReport, junitReport, CHECKS, CHECK_DESCRIPTIONS, type CheckName, type CheckResult, type VerifyOptions, type VerifyReport } from './conformance/index.js';
