export * from './shipped/clients/index.js';
export type * as PlatformApi from '../generated/types/platform.js';
export type * as HostappApi from '../generated/types/hostapp.js';
export type * as MiniappApi from '../generated/types/miniapp.js';
export * from './shipped/partner-kit/index.js';
export {
  startSandbox,
  sandboxRegistry,
  SANDBOX_HOSTAPP,
  SANDBOX_MINIAPP,
  SANDBOX_SIGNING_SECRETS,
  type RunningSandbox,
  type SandboxOptions,
} from './tools/sandbox/startSandbox.js';
export { MAGIC_AMOUNTS, magicAmountsTable } from './tools/sandbox/magicAmounts.js';

/** The miniapp JS SDK and the host side of the JS bridge (the docs' guide "Native bridge", `/docs/#native-bridge`). */
export * as MinibridgeSdk from './shipped/sdk/index.js';

/** The conformance kit behind `minibridge verify` (the docs' onboarding guide, `/docs/#onboarding`). */
export {
  verify,
  tableReport,
  junitReport,
  CHECKS,
  CHECK_DESCRIPTIONS,
  type CheckName,
  type CheckResult,
  type VerifyOptions,
  type VerifyReport,
} from './shipped/conformance/index.js';

/** `minibridge verify bridge`: what the bridge conformance page reported to a sandbox, as verify reports (ADR 0040). */
export { verifyBridge, type VerifyBridgeOptions } from './shipped/bridge-conformance/verifyBridge.js';
