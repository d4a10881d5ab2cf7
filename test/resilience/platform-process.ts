/**
 * A platform in its own process, configured from the environment exactly as in production
 * (MINIBRIDGE_REGISTRY, DATABASE_URL or MINIBRIDGE_DATA_DIR, LOG_LEVEL, MINIBRIDGE_RATE_LIMIT,
 * MINIBRIDGE_WORKER, ...), on a free loopback port. Prints `READY <url>` once listening (see
 * startChild); SIGTERM closes it gracefully, SIGKILL is what the crash tests use.
 */
import { startPlatform } from '../../src/platform/server.js';
import { announce, exitOnSignal } from './support/announce.js';

const running = await startPlatform({ config: { port: 0, host: '127.0.0.1' } });
announce(running.url);
exitOnSignal(() => running.close());
