import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type MockServer } from '../../scripts/mock/server.js';
import { repoRoot } from '../../scripts/lib/paths.js';

// The package as a partner gets it: `npm pack` (its prepack compiles dist/), installed from the
// tarball into a fresh project, type-checked with `tsc --strict` and no skipLibCheck, then run:
// the README's imports (the client, the generated types, the bundled contract, the SDK) and an
// E1 with credentials against the platform's contract mock. npm may fetch the package's
// dependencies from the registry (the local cache first); packing and installing take minutes
// on a busy machine, hence the long time-outs.

const run = promisify(execFile);
const PACK_AND_INSTALL_MS = 600_000;

let workDir: string;
let consumerDir: string;
let mock: MockServer;

/** The consumer's code, written as the README shows it. */
const consumerSource = `import { createPlatformClient, MinibridgeSdk, parseLossless } from 'minibridge';
import type { PlatformApi } from 'minibridge';
import platform from 'minibridge/openapi/platform.json' with { type: 'json' };

type CreateOrderPaymentRequest = PlatformApi.components['schemas']['CreateOrderPaymentRequest'];

const [baseUrl] = process.argv.slice(2);
if (!baseUrl) throw new Error('usage: node consumer.js <platform url>');

const client = createPlatformClient({ baseUrl, credentials: { scheme: 'basic', id: 'ma_7f3c2a', secret: 'the-miniapp-secret' } });
const body: CreateOrderPaymentRequest = {
  app_id: 'ma_7f3c2a',
  client_id: 'ha_superapp',
  order: { currency: 'VND', amount: '125000', miniapp_order_id: 'ORD-1001' },
};
const { data, response } = await client.POST('/api/v1/orders/create-order-payment/', { body, parseAs: 'text' });
const answer = data === undefined ? undefined : (parseLossless(data) as { order_payment_id?: string });
console.log(
  JSON.stringify({
    status: response.status,
    violations: response.headers.get('x-mock-violations'),
    orderPaymentId: answer?.order_payment_id,
    contractTitle: platform.info.title,
    sdkProtocol: MinibridgeSdk.BRIDGE_PROTOCOL,
    sdkBrowserFile: import.meta.resolve('minibridge/sdk/minibridge-sdk.js'),
  }),
);
`;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'minibridge-package-'));
  consumerDir = path.join(workDir, 'consumer');
  await mkdir(consumerDir);
  mock = await startMock('platform', 0, { log: () => {} });
}, 60_000);

afterAll(async () => {
  await mock?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('the npm package', () => {
  it(
    'packs with dist/, installs into a fresh project, type-checks strictly and calls E1 with credentials',
    async () => {
      const npmEnv = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
      await run('npm', ['pack', '--pack-destination', workDir], {
        cwd: repoRoot,
        env: npmEnv,
        timeout: PACK_AND_INSTALL_MS,
        maxBuffer: 64 * 1024 * 1024,
      });
      const tarball = (await readdir(workDir)).find((file) => file.endsWith('.tgz'));
      expect(tarball).toBeDefined();
      const listing = (await run('tar', ['-tzf', path.join(workDir, tarball!)], { maxBuffer: 64 * 1024 * 1024 })).stdout.split('\n');
      expect(listing).toContain('package/dist/src/index.js');
      expect(listing).toContain('package/dist/src/index.d.ts');
      // What a host app team takes: the conformance page's static files, the vectors, the JVM core's sources.
      expect(listing).toContain('package/generated/bridge-conformance/conformance.js');
      expect(listing).toContain('package/openapi/bridge.vectors.json');
      expect(listing).toContain('package/src/shipped/native/jvm/src/main/java/dev/minibridge/bridge/Miniapp.java');

      await writeFile(path.join(consumerDir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2));
      await writeFile(
        path.join(consumerDir, 'tsconfig.json'),
        JSON.stringify(
          {
            compilerOptions: {
              strict: true,
              skipLibCheck: false,
              target: 'ES2022',
              module: 'NodeNext',
              moduleResolution: 'NodeNext',
              resolveJsonModule: true,
              outDir: 'out',
            },
            files: ['consumer.ts'],
          },
          null,
          2,
        ),
      );
      await writeFile(path.join(consumerDir, 'consumer.ts'), consumerSource);
      await run('npm', ['install', '--prefer-offline', '--no-save', path.join(workDir, tarball!)], {
        cwd: consumerDir,
        env: npmEnv,
        timeout: PACK_AND_INSTALL_MS,
        maxBuffer: 64 * 1024 * 1024,
      });

      // The repository's TypeScript, on the consumer's project: the package's .d.ts must stand on
      // the package's own dependencies.
      const tsc = await run(path.join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], {
        cwd: consumerDir,
        timeout: 300_000,
      }).catch((error: { stdout?: string }) => ({ stdout: `tsc failed:\n${error.stdout ?? String(error)}` }));
      expect(tsc.stdout).toBe('');

      const { stdout } = await run(process.execPath, [path.join('out', 'consumer.js'), mock.url], { cwd: consumerDir, timeout: 120_000 });
      const result = JSON.parse(stdout) as Record<string, unknown>;
      expect(result).toMatchObject({
        status: 200,
        violations: null,
        contractTitle: 'Minibridge Platform API',
        sdkProtocol: expect.any(String),
      });
      expect(result.orderPaymentId).toEqual(expect.any(String));
      expect(String(result.sdkBrowserFile)).toMatch(/node_modules\/minibridge\/generated\/sdk\/minibridge-sdk\.js$/);
    },
    PACK_AND_INSTALL_MS * 2,
  );
});
