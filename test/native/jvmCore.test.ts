import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAITING_EVENT_TYPE } from '../../generated/sdk/bridge-conformance-contract.js';
import { repoRoot } from '../../scripts/lib/paths.js';
import { runConformance, type ConformanceWire } from '../../src/shipped/bridge-conformance/driver.js';
import { createMinibridgeSdk, type MessageEventLike, type MinibridgeSdk } from '../../src/shipped/sdk/index.js';
import { FakeWindow } from '../sdk/fakeWindows.js';
import { vectors, vectorsPath, vectorsText } from '../support/bridgeVectors.js';
import { compileJava, javaFiles, jvmRoot, requireJdk, SHORT_JVM } from '../support/jdk.js';

// The JVM reference core (src/shipped/native/jvm, ADR 0040), built and tested with nothing but the
// JDK: javac compiles it with its tests, TestMain runs every shared vector and the core's own
// cases and writes JUnit XML. Without a JDK 17 these tests fail with a message saying what to
// install; they never skip.

const run = promisify(execFile);
const schemaPath = path.join(repoRoot, 'generated', 'sdk', 'bridge.schema.json');
const RUN_MS = 120_000;

let workDir: string;
let classes: string;

beforeAll(async () => {
  requireJdk();
  workDir = await mkdtemp(path.join(os.tmpdir(), 'minibridge-jvm-'));
  classes = path.join(workDir, 'classes');
  await compileJava(javaFiles(path.join(jvmRoot, 'src')), classes);
}, 240_000);

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

async function testMain(vectorsFile: string, junit: string): Promise<{ code: number; stdout: string }> {
  const args = [
    ...SHORT_JVM,
    '-cp',
    classes,
    'dev.minibridge.bridge.TestMain',
    '--schema',
    schemaPath,
    '--vectors',
    vectorsFile,
    '--junit',
    junit,
  ];
  try {
    const { stdout } = await run('java', args, { timeout: RUN_MS, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; message: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '' };
  }
}

describe('the JVM core', () => {
  it('passes every shared vector and its own cases, and writes a JUnit report naming each', async () => {
    const junit = path.join(workDir, 'jvm-core.xml');
    const result = await testMain(vectorsPath, junit);
    expect(result.code, result.stdout).toBe(0);
    for (const vector of vectors.vectors) expect(result.stdout).toContain(`PASS vectors ${vector.id}\n`);
    const summary = /SUMMARY tests=(\d+) failed=(\d+)/.exec(result.stdout);
    expect(summary?.[2]).toBe('0');
    const coreCases = result.stdout.split('\n').filter((line) => line.startsWith('PASS core ')).length;
    expect(coreCases).toBeGreaterThanOrEqual(10);
    expect(Number(summary?.[1])).toBe(vectors.vectors.length + coreCases);
    const xml = await readFile(junit, 'utf8');
    expect(xml).toContain(`<testsuite name="vectors" tests="${vectors.vectors.length}" failures="0"`);
    expect(xml.match(/<testcase /g)).toHaveLength(Number(summary?.[1]));
  });

  it('fails, naming the vector and the digits, when a vector expects what the core does not do', async () => {
    // The same file with pay-full's expected answer rounded: a runner that cannot fail would pass it.
    const marker = '"type": "pay_result",\n              "replyTo": "p-1"';
    expect(vectorsText).toContain(marker);
    const at = vectorsText.indexOf(marker);
    const mutated = vectorsText.slice(0, at) + vectorsText.slice(at).replace('"amount": "125000.50"', '"amount": "125000.5"');
    const file = path.join(workDir, 'mutated.vectors.json');
    await writeFile(file, mutated);
    const junit = path.join(workDir, 'mutated.xml');
    const result = await testMain(file, junit);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAIL vectors pay-full');
    expect(result.stdout).toContain('paymentData.amount is "125000.50", not "125000.5"');
    expect(result.stdout).toMatch(/SUMMARY tests=\d+ failed=1\n/);
    expect(await readFile(junit, 'utf8')).toContain('<failure message="step 2, answer 1: paymentData.amount is');
  });
});

describe('the conformance runner against the JVM core, as a native web view would carry it', () => {
  let host: ChildProcessWithoutNullStreams | undefined;
  let sdk: MinibridgeSdk | undefined;

  afterAll(() => {
    sdk?.close();
    host?.kill();
  });

  it('passes every rule on the text transport, the vectors only text can carry included', async () => {
    // The page's window in a web view: the SDK and the runner send text to MinibridgeAndroid; the
    // host answers by running BridgeScript.postMessage(...) in the page, here in a vm context.
    const page = new FakeWindow('https://miniapp.example') as FakeWindow & { MinibridgeAndroid?: { postMessage(text: string): void } };
    page.parent = page;
    const child = spawn('java', [...SHORT_JVM, '-cp', classes, 'dev.minibridge.bridge.ConformanceHost', schemaPath, WAITING_EVENT_TYPE]);
    host = child;
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    page.MinibridgeAndroid = { postMessage: (text) => child.stdin.write(`${JSON.stringify(text)}\n`) };
    const context = vm.createContext({ window: { postMessage: (data: unknown, origin: string) => page.postMessage(data, origin) } });
    readline.createInterface({ input: child.stdout }).on('line', (script) => vm.runInContext(script, context));
    sdk = createMinibridgeSdk({ window: page });
    const subscriber = sdk;
    const wire: ConformanceWire = {
      transport: 'android',
      carries: 'text',
      send: (data) => page.MinibridgeAndroid!.postMessage(data as string),
      listen: (receive) => {
        const listener = (event: MessageEventLike) => {
          if (event.source === page) receive(event.data);
        };
        page.addEventListener('message', listener);
        return () => page.removeEventListener('message', listener);
      },
    };
    const report = await runConformance({
      vectors,
      wire,
      run: 'jvm',
      userWaitMs: 30_000,
      answerWaitMs: 30_000,
      subscribe: (callback) => subscriber.subscribe((event) => callback(event.detail)),
    });
    expect(
      report.checks.filter((check) => check.outcome !== 'pass'),
      `${JSON.stringify(report.checks, null, 1)}\n${stderr}`,
    ).toEqual([]);
    expect(report.page).toMatchObject({ transport: 'android', answersAs: 'text' });
    // Nothing was left out for the transport: every vector ran, the 20-digit amount included.
    for (const check of report.checks) expect(check.note ?? '').not.toMatch(/need a transport/);
  }, 90_000);
});
