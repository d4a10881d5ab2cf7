/**
 * npx tsx examples/demo-miniapp/start.ts: runs the platform, the sandbox host app and the demo
 * miniapp, and prints the simulator address to open in a browser. Ctrl-C stops everything.
 */
import { startDemoStack } from './stack.js';

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const stack = await startDemoStack({
  ports: { platform: port('PLATFORM_PORT', 8080), hostapp: port('HOSTAPP_PORT', 8081), miniapp: port('MINIAPP_PORT', 8083) },
  logLevel: process.env.LOG_LEVEL ?? 'info',
});
console.log(`platform:          ${stack.platform.url}`);
console.log(`demo miniapp:      ${stack.miniappUrl}`);
console.log(`host-app simulator: ${stack.simulatorUrl}`);
const stop = () => void stack.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
