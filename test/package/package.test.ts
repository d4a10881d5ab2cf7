import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type MockServer } from '../../scripts/mock/server.js';
import { repoRoot } from '../../scripts/lib/paths.js';
import { buildPackage, PACKAGES } from '../../scripts/build-packages.js';
import { HOSTAPP, referenceHostappRouter, serve, type RunningServer } from '../conformance/reference.js';

// The packages as partners get them (ADR 0042): every package built (what each one's prepack runs,
// here in one process rather than five), then `npm pack` of every workspace, each tarball installed
// alone into a fresh project, the projects type-checked with `strict` and WITHOUT skipLibCheck (one
// `tsc --build` of the five, each its own program), then run: the client calls E1 on the platform's contract mock, the partner kit serves E4, the SDK's
// miniapp side talks to its host side, the installed `minibridge verify` passes a conforming host
// app. Footprints are read with `npm ls --omit=dev --all`. npm installs from its cache first
// (--prefer-offline) and may fetch from the registry; the time-outs bound a busy machine, no
// assertion is about time.

const run = promisify(execFile);
const NPM_MS = 300_000;
const npmEnv = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
const tsc = path.join(repoRoot, 'node_modules', '.bin', 'tsc');

interface Manifest {
  name: string;
  version: string;
  license?: string;
  private?: boolean;
  types?: string;
  bin?: Record<string, string>;
  exports: Record<string, string | { types: string; import: string }>;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

interface Packed {
  tarball: string;
  /** Paths inside the tarball, without the leading `package/`. */
  files: string[];
  manifest: Manifest;
}

const NAMES = ['@minibridge/contract', '@minibridge/client', '@minibridge/partner-kit', '@minibridge/sdk', '@minibridge/verify'] as const;
type PackageName = (typeof NAMES)[number];

/** A fresh project per package: what it installs beside the tarball, and the program it compiles and runs. */
interface ConsumerSpec {
  name: string;
  package: PackageName;
  /** Other packages (`name@version`) the project installs, as its devDependencies. */
  extra?: () => Promise<string[]>;
  /** consumer.ts; the client's calls the platform's contract mock at `mockUrl`. */
  source: (mockUrl: string) => string;
}

const CONSUMERS: ConsumerSpec[] = [
  {
    name: 'contract',
    package: '@minibridge/contract',
    source: () => `import type { PlatformApi, HostappApi } from '@minibridge/contract';
import type { paths } from '@minibridge/contract/types/hostapp';
import platform from '@minibridge/contract/openapi/platform.json' with { type: 'json' };

type E2Answer = PlatformApi.components['schemas']['GetPaymentStatusResponse'];
type E4Report = HostappApi.components['schemas']['HostappPaymentStatusReport'];
type E4Path = keyof paths;
const answer: E2Answer = { order_payment_id: 'hop_1', app_id: 'ma_7f3c2a', client_id: 'ha_superapp', payment_status: 'paid' };
const report: E4Report = { ...answer, payment_status: 'in_process' };
const e4: E4Path = '/get-payment-status';
console.log(JSON.stringify({ title: platform.info.title, status: answer.payment_status, report: report.payment_status, e4 }));
`,
  },
  {
    name: 'client',
    package: '@minibridge/client',
    source: (mockUrl) => `import { createPlatformClient, type PlatformApi } from '@minibridge/client';

const client = createPlatformClient({ baseUrl: ${JSON.stringify(mockUrl)}, credentials: { scheme: 'basic', id: 'ma_7f3c2a', secret: 'the-miniapp-secret' } });
const body: PlatformApi.components['schemas']['CreateOrderPaymentRequest'] = {
  app_id: 'ma_7f3c2a',
  client_id: 'ha_superapp',
  order: { currency: 'VND', amount: '125000', miniapp_order_id: 'ORD-1001' },
};
const { data, response } = await client.POST('/api/v1/orders/create-order-payment/', { body });
const orderPaymentId: string | undefined = data?.order_payment_id;
console.log(JSON.stringify({ status: response.status, violations: response.headers.get('x-mock-violations'), orderPaymentId }));
`,
  },
  {
    name: 'partner-kit',
    package: '@minibridge/partner-kit',
    extra: async () => [
      `@types/express@${await installedVersion('@types/express')}`,
      `@types/node@${await installedVersion('@types/node')}`,
    ],
    source: () => `import express from 'express';
import type { AddressInfo } from 'node:net';
import { createHostappRouter, prefixedAuthorization } from '@minibridge/partner-kit';

const app = express().use(
  createHostappRouter({
    clientId: 'ha_superapp',
    secretKey: 'the-hostapp-secret',
    // Settings read from the environment may be absent: the options take undefined as "not set".
    tokenPrefix: process.env['HOSTAPP_TOKEN_PREFIX'],
    signingSecrets: process.env['HOSTAPP_SIGNING_SECRET']?.split(','),
    handlers: {
      createOrderPayment: () => ({ order_payment_id: 'hop_1' }),
      getPaymentStatus: (query) => ({ order_payment_id: query.order_payment_id, app_id: query.app_id, client_id: query.client_id, payment_status: 'paid' }),
      receiveEvent: () => ({ received: true }),
    },
  }),
);
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const url = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}/get-payment-status\`;
const ask = async (authorization: string) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ app_id: 'ma_7f3c2a', client_id: 'ha_superapp', order_payment_id: 'hop_1' }),
  });
  return { status: response.status, body: (await response.json()) as unknown };
};
const answered = await ask(prefixedAuthorization('Token', 'ha_superapp', 'the-hostapp-secret'));
const refused = await ask(prefixedAuthorization('Token', 'ha_superapp', 'a-wrong-secret'));
server.close();
console.log(JSON.stringify({ answered, refused }));
`,
  },
  {
    name: 'sdk',
    package: '@minibridge/sdk',
    source: () => `import { createHostBridge, createMinibridgeSdk, BRIDGE_PROTOCOL, type BridgeEndpoint } from '@minibridge/sdk';

// Two in-memory endpoints joined back to back: what one side posts, the other receives.
type Listener = (data: unknown) => void;
function pipe(): [BridgeEndpoint, BridgeEndpoint] {
  const listeners: [Set<Listener>, Set<Listener>] = [new Set(), new Set()];
  const end = (mine: Set<Listener>, theirs: Set<Listener>): BridgeEndpoint => ({
    post: (message) => queueMicrotask(() => theirs.forEach((listener) => listener(structuredClone(message)))),
    listen: (listener) => (mine.add(listener), () => mine.delete(listener)),
  });
  return [end(listeners[0], listeners[1]), end(listeners[1], listeners[0])];
}
const [miniappEnd, hostEnd] = pipe();
let asked = '';
createHostBridge({ endpoint: hostEnd, onPay: async (paymentData) => ((asked = String(paymentData.amount)), 'success') });
const sdk = createMinibridgeSdk({ endpoint: miniappEnd });
const outcome = await sdk.pay({ amount: '125000', currency: 'VND', orderPaymentId: 'hop_1' });
sdk.close();
console.log(JSON.stringify({ protocol: BRIDGE_PROTOCOL, status: outcome.status, asked }));
`,
  },
  {
    name: 'verify',
    package: '@minibridge/verify',
    extra: async () => [`@types/node@${await installedVersion('@types/node')}`],
    source: () => `import { verify, tableReport, CHECKS } from '@minibridge/verify';
import { verifyBridge } from '@minibridge/verify/bridge';

const [url, id, secret] = process.argv.slice(2) as [string, string, string];
const report = await verify({ subject: 'hostapp', url, credentials: { id, secret }, tokenPrefix: 'Token', paths: {}, e4Method: 'POST', signingSecrets: [], appId: process.env['VERIFY_APP_ID'] });
console.log(JSON.stringify({ passed: report.passed, checks: CHECKS.length, table: tableReport(report).length > 0, bridge: typeof verifyBridge }));
`,
  },
];

let workDir: string;
const packed = new Map<PackageName, Packed>();
let mock: MockServer;
let hostapp: RunningServer;

/** The name in a workspace folder's package.json. */
function workspaceName(dir: string): string {
  return (JSON.parse(readFileSync(path.join(repoRoot, dir, 'package.json'), 'utf8')) as { name: string }).name;
}

/** The version the repository installed, so the consumer's npm finds it in the cache. */
async function installedVersion(name: string): Promise<string> {
  return (JSON.parse(await readFile(path.join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The strictest settings a partner's project may use (@tsconfig/strictest's checks), declarations included. */
const compilerOptions = {
  strict: true,
  skipLibCheck: false,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noPropertyAccessFromIndexSignature: true,
  noImplicitOverride: true,
  noImplicitReturns: true,
  noFallthroughCasesInSwitch: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  resolveJsonModule: true,
  outDir: 'out',
};

/** Each consumer's folder, and what installing it or type-checking it reported (empty: clean). */
const consumers = new Map<string, { dir: string; problems: string }>();

/** A fresh strict TypeScript project with the package's tarball (and its `extra` packages) installed by one npm run. */
async function install(spec: ConsumerSpec, mockUrl: string): Promise<void> {
  const dir = path.join(workDir, spec.name);
  await mkdir(dir);
  const extra = (await spec.extra?.()) ?? [];
  const devDependencies = Object.fromEntries(extra.map((pin) => [pin.slice(0, pin.lastIndexOf('@')), pin.slice(pin.lastIndexOf('@') + 1)]));
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: `consumer-${spec.name}`, private: true, type: 'module', ...(extra.length > 0 && { devDependencies }) }, null, 2),
  );
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }, null, 2));
  await writeFile(path.join(dir, 'consumer.ts'), spec.source(mockUrl));
  await run('npm', ['install', '--prefer-offline', pack(spec.package).tarball], {
    cwd: dir,
    env: npmEnv,
    timeout: NPM_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * Installs every consumer side by side, then type-checks and compiles them all with one
 * `tsc --build` of the five projects: each is still its own program with its own node_modules,
 * options and diagnostics (each line names its project's folder), but one compiler process
 * checks them one after another on warmed-up code, about half the CPU of a `tsc -p` per project.
 */
async function prepareConsumers(mockUrl: string): Promise<void> {
  await Promise.all(
    CONSUMERS.map(async (spec) => {
      const consumer = { dir: path.join(workDir, spec.name), problems: '' };
      consumers.set(spec.name, consumer);
      await install(spec, mockUrl).catch((error: unknown) => (consumer.problems = `npm install failed: ${String(error)}`));
    }),
  );
  const installed = CONSUMERS.map((spec) => spec.name).filter((name) => consumers.get(name)!.problems === '');
  const built = await run(tsc, ['--build', ...installed], { cwd: workDir, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
  );
  // A diagnostic starts with its file's path, inside its project's folder; lines indented under it belong to it.
  let project: string | undefined;
  for (const line of built.stdout.split('\n')) {
    if (line.trim() === '') continue;
    project = /^\s/.test(line) ? project : installed.find((name) => line.startsWith(`${name}/`));
    const consumer = consumers.get(project ?? '');
    if (consumer) consumer.problems += `${line}\n`;
    else throw new Error(`tsc --build printed a line about no consumer: ${line}\n${built.stdout}`);
  }
}

/** A consumer's folder, once its project type-checked clean. */
function consumerDir(name: string): string {
  const consumer = consumers.get(name);
  if (!consumer) throw new Error(`no consumer ${name}`);
  expect(consumer.problems, `${name}: tsc --build`).toBe('');
  return consumer.dir;
}

/** What `node out/consumer.js` prints, as JSON. */
async function runConsumer(dir: string, args: string[] = []): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [path.join('out', 'consumer.js'), ...args], { cwd: dir, timeout: 120_000 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Every package the consumer's production tree holds, as `name` (from `npm ls --omit=dev --all`). */
async function productionTree(dir: string): Promise<string[]> {
  const { stdout } = await run('npm', ['ls', '--omit=dev', '--all', '--json'], { cwd: dir, env: npmEnv, timeout: 120_000 });
  const names = new Set<string>();
  const walk = (dependencies: Record<string, { dependencies?: Record<string, unknown> }> | undefined) => {
    for (const [name, node] of Object.entries(dependencies ?? {})) {
      names.add(name);
      walk(node.dependencies as Record<string, { dependencies?: Record<string, unknown> }> | undefined);
    }
  };
  walk((JSON.parse(stdout) as { dependencies?: Record<string, { dependencies?: Record<string, unknown> }> }).dependencies);
  return [...names].sort();
}

/** The package's own runtime dependencies and theirs, read from the repository's install. */
async function closure(names: string[]): Promise<string[]> {
  const seen = new Set<string>();
  const visit = async (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const manifest = JSON.parse(await readFile(path.join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as Manifest;
    for (const dependency of Object.keys(manifest.dependencies ?? {})) await visit(dependency);
  };
  for (const name of names) await visit(name);
  return [...seen].sort();
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'minibridge-packages-'));
  const tarballs = path.join(workDir, 'tarballs');
  await mkdir(tarballs);
  // The builds npm would start one by one, each in a process of its own, as one process's work.
  for (const name of Object.keys(PACKAGES)) await buildPackage(name);
  await run('npm', ['pack', '--workspaces', '--ignore-scripts', '--pack-destination', tarballs], {
    cwd: repoRoot,
    env: npmEnv,
    timeout: NPM_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const file of await readdir(tarballs)) {
    const tarball = path.join(tarballs, file);
    const listing = (await run('tar', ['-tzf', tarball], { maxBuffer: 16 * 1024 * 1024 })).stdout;
    const manifest = JSON.parse((await run('tar', ['-xzOf', tarball, 'package/package.json'])).stdout) as Manifest;
    const files = listing
      .split('\n')
      .filter(Boolean)
      .map((entry) => entry.replace(/^package\//, ''));
    packed.set(manifest.name as PackageName, { tarball, files, manifest });
  }
  mock = await startMock('platform', 0, { log: () => {} });
  hostapp = await serve(express().use(referenceHostappRouter()));
  await prepareConsumers(mock.url);
}, NPM_MS * 2);

afterAll(async () => {
  await mock?.close();
  await hostapp?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** The tarball's JavaScript files (not declarations), each with its source. */
async function javascriptOf(tarball: string, files: string[]): Promise<Map<string, string>> {
  const sources = new Map<string, string>();
  for (const file of files.filter((name) => name.endsWith('.js'))) {
    sources.set(file, (await run('tar', ['-xzOf', tarball, `package/${file}`], { maxBuffer: 16 * 1024 * 1024 })).stdout);
  }
  return sources;
}

function pack(name: PackageName): Packed {
  const found = packed.get(name);
  if (!found) throw new Error(`npm pack made no ${name}`);
  return found;
}

// The packages side by side: the consumers were installed and compiled before the tests, and each
// test runs its own and asks npm about its tree, in child processes, so five of them share the cores.
describe.concurrent('the packages partners install', () => {
  it('are one per audience, each licensed, documented, public, and shipping every file its exports, types and bin name', () => {
    expect([...packed.keys()].sort()).toEqual([...NAMES].sort());
    for (const name of NAMES) {
      const { manifest, files } = pack(name);
      expect(manifest.license, name).toBe('Apache-2.0');
      expect(manifest.private, name).toBeUndefined();
      expect(files, name).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE']));
      // No install-time script: nothing runs on a partner's machine, and prepack never runs from a tarball.
      expect(
        Object.keys(manifest.scripts ?? {}).filter((script) => /install|prepare/.test(script)),
        name,
      ).toEqual([]);
      // The prepack (which `npm pack` and `npm publish` run) is the build this file ran for the package.
      const build = Object.keys(PACKAGES).find((key) => workspaceName(PACKAGES[key]!.dir) === name);
      expect(build, name).toBeDefined();
      expect(manifest.scripts?.['prepack'], name).toBe(`tsx ../../../scripts/build-packages.ts ${build}`);
      // Compiled JS and declarations only: no TypeScript sources, no tests.
      expect(
        files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')),
        name,
      ).toEqual([]);
      const targets = [
        manifest.types!,
        ...Object.values(manifest.bin ?? {}),
        ...Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : [target.types, target.import])),
      ];
      for (const target of targets) {
        const pattern = new RegExp(
          `^${target
            .replace(/^\.\//, '')
            .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
            .replace('*', '.+')}$`,
        );
        expect(
          files.some((file) => pattern.test(file)),
          `${name}: ${target}`,
        ).toBe(true);
      }
    }
  });

  it(
    '@minibridge/contract: the bundled documents and the generated types, with no dependencies',
    async () => {
      const { manifest, files } = pack('@minibridge/contract');
      expect(manifest.dependencies).toBeUndefined();
      expect(files).toEqual(
        expect.arrayContaining(['dist/openapi/platform.json', 'dist/openapi/hostapp.yaml', 'dist/generated/types/miniapp.d.ts']),
      );
      const dir = consumerDir('contract');
      expect(await runConsumer(dir)).toEqual({
        title: 'Minibridge Platform API',
        status: 'paid',
        report: 'in_process',
        e4: '/get-payment-status',
      });
      expect(await productionTree(dir)).toEqual(['@minibridge/contract']);
    },
    NPM_MS * 2,
  );

  it(
    '@minibridge/client: its only dependency is openapi-fetch (and what openapi-fetch brings); it calls E1 with credentials',
    async () => {
      const { tarball, manifest, files } = pack('@minibridge/client');
      expect(Object.keys(manifest.dependencies ?? {})).toEqual(['openapi-fetch']);
      // No @types/node in this project: the client's declarations stand on the default libraries.
      const dir = consumerDir('client');
      const result = await runConsumer(dir);
      expect(result).toMatchObject({ status: 200, violations: null });
      expect(result.orderPaymentId).toEqual(expect.any(String));
      expect(await productionTree(dir)).toEqual(['@minibridge/client', ...(await closure(['openapi-fetch']))].sort());
      // It runs wherever fetch does (browsers, Deno, Bun, edge workers): no Node module, no Buffer.
      const shipped = await javascriptOf(tarball, files);
      expect(shipped.size).toBeGreaterThan(0);
      for (const [file, source] of shipped) {
        expect(source, file).not.toMatch(/\bfrom\s*['"]node:|\brequire\(|\bBuffer\b|\bprocess\./);
      }
    },
    NPM_MS * 2,
  );

  it(
    '@minibridge/partner-kit: Express is a peer; a host app server built with it answers E4 and refuses wrong credentials',
    async () => {
      const { manifest } = pack('@minibridge/partner-kit');
      expect(manifest.peerDependencies).toMatchObject({ express: expect.any(String) });
      expect(manifest.dependencies?.express).toBeUndefined();
      const dir = consumerDir('partner-kit');
      expect(await runConsumer(dir)).toEqual({
        answered: {
          status: 200,
          body: { order_payment_id: 'hop_1', app_id: 'ma_7f3c2a', client_id: 'ha_superapp', payment_status: 'paid' },
        },
        refused: { status: 200, body: { error_code: 'UNAUTHORIZED' } },
      });
      const tree = await productionTree(dir);
      // express arrives as the peer npm installs beside the kit, not as the kit's own dependency.
      expect(tree).toContain('express');
      expect(tree).toEqual(expect.arrayContaining(['@minibridge/partner-kit', 'ajv', 'ajv-formats', 'lossless-json']));
      for (const platformOnly of ['pg', '@electric-sql/pglite', 'ioredis', 'pino', 'prom-client', 'undici', 'yaml']) {
        expect(tree).not.toContain(platformOnly);
      }
    },
    NPM_MS * 2,
  );

  it(
    '@minibridge/sdk: no dependencies; the miniapp side and the host side answer each other',
    async () => {
      const { manifest, files } = pack('@minibridge/sdk');
      expect(manifest.dependencies).toBeUndefined();
      expect(manifest.peerDependencies).toBeUndefined();
      expect(files).toEqual(
        expect.arrayContaining([
          'dist/browser/minibridge-sdk.js',
          'dist/browser/minibridge-host.js',
          'dist/bridge.schema.json',
          'dist/native/jvm/src/main/java/dev/minibridge/bridge/Miniapp.java',
        ]),
      );
      const dir = consumerDir('sdk');
      expect(await runConsumer(dir)).toEqual({ protocol: 'minibridge-bridge', status: 'success', asked: '125000' });
      expect(await productionTree(dir)).toEqual(['@minibridge/sdk']);
    },
    NPM_MS * 2,
  );

  it(
    '@minibridge/verify: the installed `minibridge verify` passes a conforming host app, and its API type-checks',
    async () => {
      const { manifest } = pack('@minibridge/verify');
      expect(manifest.bin).toEqual({ minibridge: 'bin/minibridge.js' });
      const dir = consumerDir('verify');
      expect(await runConsumer(dir, [hostapp.url, HOSTAPP.id, HOSTAPP.secret])).toMatchObject({
        passed: true,
        table: true,
        bridge: 'function',
      });
      const cli = await run(
        path.join(dir, 'node_modules', '.bin', 'minibridge'),
        ['verify', 'hostapp', '--url', hostapp.url, '--credentials', `${HOSTAPP.id}:${HOSTAPP.secret}`],
        { cwd: dir, timeout: 120_000 },
      );
      expect(cli.stdout).toContain('PASSED');
      const tree = await productionTree(dir);
      expect(tree).toEqual(['@minibridge/verify', ...(await closure(['ajv', 'ajv-formats', 'lossless-json']))].sort());
    },
    NPM_MS * 2,
  );
});
