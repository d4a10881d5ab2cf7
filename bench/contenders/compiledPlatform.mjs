/**
 * The platform as a deployment runs it: the compiled `dist/` (what `npm start` runs, ADR 0034),
 * loaded by plain `node`, configured from the environment like test/resilience/platform-process.ts.
 * Prints `READY <url>` once listening; SIGTERM closes it gracefully.
 */
import { startPlatform } from '../../dist/src/platform/server.js';

const running = await startPlatform({ config: { port: 0, host: '127.0.0.1' } });
process.stdout.write(`READY ${running.url}\n`);
const stop = async () => {
  await running.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
