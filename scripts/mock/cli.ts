/**
 * Contract mocks of the three APIs (Prism on the bundled documents, answering with the
 * contract's examples and the contract's error rules; see server.ts beside this file).
 *
 *   npm run mock:platform            # http://127.0.0.1:4010
 *   npm run mock:hostapp             # http://127.0.0.1:4011
 *   npm run mock:miniapp -- --port 5012   (or PORT=5012)
 *   npm run mock:hostapp -- --host 0.0.0.0 (or MOCK_HOST=0.0.0.0; default 127.0.0.1)
 *
 * The npm scripts exec one Node process (`node --import tsx`), so a signal to npm reaches the mock,
 * and the mock stops when npm dies without passing one on.
 */
import { parseArgs } from 'node:util';
import { API_NAMES, type ApiName } from '../../src/contract/documents.js';
import { stopWithParent } from '../lib/stop-with-parent.js';
import { startMock } from './server.js';

const DEFAULT_PORTS: Record<ApiName, number> = { platform: 4010, hostapp: 4011, miniapp: 4012 };

const { values, positionals } = parseArgs({ options: { port: { type: 'string' }, host: { type: 'string' } }, allowPositionals: true });
const api = positionals[0] as ApiName | undefined;
if (!api || !API_NAMES.includes(api)) {
  console.error(`usage: tsx scripts/mock/cli.ts <${API_NAMES.join('|')}> [--port <port>] [--host <address>]`);
  process.exit(2);
}
const port = Number(values.port ?? process.env.PORT ?? DEFAULT_PORTS[api]);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`not a port: ${values.port ?? process.env.PORT}`);
  process.exit(2);
}

const mock = await startMock(api, port, { host: values.host ?? process.env.MOCK_HOST ?? '127.0.0.1' });
console.log(`[mock:${api}] serving the ${api} API contract at ${mock.url}`);
// The mock is this process (Prism runs in it); it stops with its parent (npm run), however that ends.
stopWithParent(async (reason) => {
  await mock.close();
  console.log(`[mock:${api}] stopped (${reason})`);
});
