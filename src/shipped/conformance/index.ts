export { CHECKS, CHECK_DESCRIPTIONS, type CheckName } from './checks.js';
export { junitReport, tableReport, type ReportedCheck, type ReportedFailure, type ReportedRun } from './reporters.js';
export { verify, type CheckResult, type Failure, type VerifyOptions, type VerifyReport } from './runner.js';
export { SUBJECTS, type Credentials, type PartnerEndpoint, type Subject } from './targets.js';
