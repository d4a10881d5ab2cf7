/** The round-robin proxy (proxy/roundRobin.ts) in a process of its own, in front of BENCH_UPSTREAMS (comma-separated URLs). */
import { announce, exitOnSignal, localUrl } from '../../test/resilience/support/announce.js';
import { createRoundRobinProxy } from './roundRobin.js';

const proxy = createRoundRobinProxy((process.env.BENCH_UPSTREAMS ?? '').split(',').filter(Boolean));
proxy.server.listen(0, '127.0.0.1', () => announce(localUrl(proxy.server)));
exitOnSignal(() => new Promise<void>((resolve) => proxy.server.close(() => resolve())));
