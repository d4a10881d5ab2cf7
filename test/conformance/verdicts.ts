import type { VerifyReport } from '../../src/shipped/conformance/index.js';

/** "check operationId" of every failing check, sorted. */
export function failing(report: VerifyReport): string[] {
  return report.results
    .filter((result) => result.outcome === 'fail')
    .map((result) => `${result.check} ${result.operationId}`)
    .sort();
}
