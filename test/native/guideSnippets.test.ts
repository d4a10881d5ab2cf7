import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';
import { compileJava, javaFiles, jvmRoot, requireJdk, SHORT_JVM_TOOL } from '../support/jdk.js';

// Guide 07's native snippets call the tested JVM core: the Java glue compiles against the core and
// stand-ins of the Android classes it uses (test/native/android-stubs, Android's signatures); the
// Kotlin and Swift snippets, which this machine cannot compile, may name only the core's classes
// and methods (read from the compiled core with javap), the platform names listed below, and the
// host app's own functions listed below. A name in none of these fails the test.

const run = promisify(execFile);
const guidePath = path.join(repoRoot, 'docs', 'guides', '07-native-bridge.md');
const guide = await readFile(guidePath, 'utf8');
const blocks = [...guide.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((match) => ({ lang: match[1]!, code: match[2]! }));
const snippets = (lang: string) => blocks.filter((block) => block.lang === lang).map((block) => block.code);

const KEYWORDS: Record<string, string[]> = {
  kotlin: ['class', 'private', 'val', 'var', 'override', 'fun', 'if', 'else', 'null', 'return', 'this', 'true', 'false', 'in', 'is', 'as'],
  swift: [
    'final',
    'class',
    'private',
    'var',
    'let',
    'init',
    'throws',
    'super',
    'try',
    'func',
    'guard',
    'else',
    'return',
    'extension',
    'weak',
    'in',
    'self',
    'as',
    'nil',
    '_',
  ],
};
/** Platform names the snippets may use (Android, UIKit/WebKit, Foundation). Add one here only if it is the platform's. */
const PLATFORM: Record<string, string[]> = {
  kotlin: ['Activity', 'runOnUiThread'],
  swift: [
    'NSObject',
    'WKScriptMessageHandler',
    'WKWebView',
    'WKUserContentController',
    'WKScriptMessage',
    'Bundle',
    'main',
    'url',
    'String',
    'utf8',
    'DispatchQueue',
    'async',
    'evaluateJavaScript',
    'configuration',
    'userContentController',
    'add',
    'didReceive',
    'body',
  ],
};
/** The host app's own code the snippets call (its payment sheet, its share feature, its types). */
const YOURS: Record<string, string[]> = {
  kotlin: ['showPaymentSheet', 'share'],
  swift: ['showPaymentSheet', 'CheckoutCoordinator'],
};
/** What every snippet set must call: the specification's delegate names and the core's entry points. */
const REQUIRED = ['Miniapp', 'MiniappDelegate', 'PaymentData', 'didReceivePaymentEvent', 'setStatus', 'sendPaymentEvent'];

let workDir: string;
let classes: string;
let coreNames: Set<string>;

beforeAll(async () => {
  requireJdk();
  workDir = await mkdtemp(path.join(os.tmpdir(), 'minibridge-snippets-'));
  classes = path.join(workDir, 'classes');
  await compileJava(
    [...javaFiles(path.join(jvmRoot, 'src', 'main')), ...javaFiles(path.join(repoRoot, 'test', 'native', 'android-stubs'))],
    classes,
  );
  coreNames = await publicApi(path.join(classes, 'dev', 'minibridge', 'bridge'));
}, 240_000);

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** The core's public classes and their public methods, as javap reads them from the compiled classes. */
async function publicApi(dir: string): Promise<Set<string>> {
  const names = new Set<string>();
  const files = (await readdir(dir)).filter((file) => file.endsWith('.class')).map((file) => path.join(dir, file));
  const { stdout } = await run('javap', [...SHORT_JVM_TOOL, '-public', ...files], { maxBuffer: 16 * 1024 * 1024 });
  for (const line of stdout.split('\n')) {
    const type = /public .*(?:class|interface|record) dev\.minibridge\.bridge\.(?:\w+\$)*(\w+)/.exec(line);
    if (type) names.add(type[1]!);
    const method = /^\s+public .*?(\w+)\(/.exec(line);
    if (method) names.add(method[1]!);
  }
  return names;
}

/** The identifiers of code, without comments and string literals. */
function identifiers(code: string): Set<string> {
  const stripped = code
    .replace(/\/\/[^\n]*/g, '')
    .replace(/"""[\s\S]*?"""/g, '""')
    .replace(/"(?:\\.|[^"\\])*"/g, '""');
  return new Set(stripped.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []);
}

/** Names the snippet declares itself: types, functions, variables, parameters and labels, closure parameters. */
function declared(code: string): Set<string> {
  const names = new Set<string>();
  for (const match of code.matchAll(/\b(?:class|struct|fun|func|val|var|let)\s+(\w+)/g)) names.add(match[1]!);
  for (const match of code.matchAll(/(\w+)\s*:/g)) names.add(match[1]!);
  for (const match of code.matchAll(/\{\s*(?:\[[^\]]*\]\s*)?(\w+)\s+(?:in|->)/g)) names.add(match[1]!);
  return names;
}

describe('guide 07 snippets', () => {
  it('has Java, Kotlin and Swift snippets', () => {
    expect(snippets('java').length).toBeGreaterThanOrEqual(1);
    expect(snippets('kotlin').length).toBeGreaterThanOrEqual(1);
    expect(snippets('swift').length).toBeGreaterThanOrEqual(1);
  });

  it('the Java glue compiles against the core and Android’s signatures', async () => {
    for (const [index, code] of snippets('java').entries()) {
      const name = /\bclass\s+(\w+)/.exec(code)?.[1];
      expect(name, `java snippet ${index + 1} declares a class`).toBeDefined();
      const dir = path.join(workDir, `snippet-${index}`);
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, `${name}.java`);
      await writeFile(file, code);
      await expect(compileJava([file], path.join(dir, 'out'), [classes])).resolves.toBeDefined();
    }
  });

  it.each(['kotlin', 'swift'])('the %s snippets name only the core’s API, the listed platform names and the host app’s own', (lang) => {
    const code = snippets(lang).join('\n');
    const allowed = new Set([...KEYWORDS[lang]!, ...PLATFORM[lang]!, ...YOURS[lang]!, ...coreNames, ...declared(code)]);
    const unknown = [...identifiers(code)].filter((name) => !allowed.has(name));
    expect(unknown, `names in the ${lang} snippets that are neither the core's nor listed`).toEqual([]);
    const used = identifiers(code);
    for (const name of REQUIRED) expect(used.has(name), `${lang} snippets call ${name}`).toBe(true);
  });

  it('the names the test allows as the core’s are the core’s (a name removed from the core fails the snippets)', () => {
    for (const name of [
      ...REQUIRED,
      'BridgeSchema',
      'BridgeScript',
      'receive',
      'postMessage',
      'sendCustomEvent',
      'payloadJson',
      'expectsReply',
      'resolve',
      'reject',
    ]) {
      expect(coreNames.has(name), name).toBe(true);
    }
    // Names of the old snippets, which called functions that existed nowhere.
    for (const name of ['decodeAndValidate', 'payResult', 'BridgeMessage']) expect(coreNames.has(name), name).toBe(false);
    // And the old snippet would fail the check.
    const old = 'val request = BridgeMessage.decodeAndValidate(text) ?: return';
    const allowed = new Set([...KEYWORDS.kotlin!, ...PLATFORM.kotlin!, ...YOURS.kotlin!, ...coreNames, ...declared(old)]);
    expect([...identifiers(old)].filter((name) => !allowed.has(name))).toEqual(['BridgeMessage', 'decodeAndValidate']);
  });
});
