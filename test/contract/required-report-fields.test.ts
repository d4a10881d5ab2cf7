/**
 * The generated types are as strong as the contract: the E2 answer and the E4 report require
 * `payment_status` (and the payment's identity) because PaymentStatusReport does. The fixture holds
 * the type-level assertions; compiling it here makes `vitest run` fail, not only `npm run check`,
 * when a field turns optional again.
 */
import path from 'node:path';
import ts from 'typescript';
import { expect, test } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';

const fixture = path.join(repoRoot, 'test/contract/fixtures/required-report-fields.ts');

function compilerOptions(): ts.CompilerOptions {
  const configFile = ts.readConfigFile(path.join(repoRoot, 'tsconfig.json'), (file) => ts.sys.readFile(file));
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, repoRoot);
  return { ...parsed.options, noEmit: true, skipLibCheck: true };
}

test('the E2 answer and E4 report types require payment_status: the fixture compiles without a diagnostic', () => {
  const program = ts.createProgram([fixture], compilerOptions());
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(diagnostics).toEqual([]);
});

test('the fixture can fail: with payment_status optional, its expectations turn into errors', () => {
  // The same assertions against a report type whose payment_status is optional, as it was generated
  // before PaymentStatusReport listed it as required.
  const weak = `type Report = { order_payment_id: string; app_id: string; client_id: string; payment_status?: 'paid' | 'failed' };
type IsRequired<T, K extends keyof T> = object extends Pick<T, K> ? false : true;
export const requires: IsRequired<Report, 'payment_status'> = true;
// @ts-expect-error a report without payment_status is not a report
export const without: Report = { order_payment_id: 'hop_1', app_id: 'ma_1', client_id: 'ha_1' };
`;
  const file = path.join(repoRoot, 'test/contract/fixtures/weak-report.ts');
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => (path.resolve(name) === file ? weak : readFile(name));
  host.fileExists = (
    (exists) => (name: string) =>
      path.resolve(name) === file || exists(name)
  )(host.fileExists.bind(host));
  const program = ts.createProgram([file], options, host);
  const codes = ts.getPreEmitDiagnostics(program).map((d) => d.code);
  expect(codes).toContain(2322); // true is not assignable to false
  expect(codes).toContain(2578); // unused @ts-expect-error
});
