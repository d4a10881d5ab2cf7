/**
 * npx tsx examples/demo-miniapp/start.ts: runs the platform, the sandbox host app and the demo
 * miniapp, and prints the simulator address to open in a browser. Ctrl-C stops everything.
 */
import { DEFAULT_DEMO_MINIAPP_PORT, DEFAULT_HOSTAPP_PORT } from '../../src/tools/sandbox/startSandbox.js';
import { startDemoStack } from './stack.js';

// The same variables as npm start: PORT, MINIBRIDGE_SANDBOX_HOSTAPP_PORT, MINIBRIDGE_SANDBOX_DEMO_PORT.
const port = (name: string, fallback: number) => Number(process.env[name] || fallback);
const stack = await startDemoStack({
  ports: {
    platform: port('PORT', 8080),
    hostapp: port('MINIBRIDGE_SANDBOX_HOSTAPP_PORT', DEFAULT_HOSTAPP_PORT),
    miniapp: port('MINIBRIDGE_SANDBOX_DEMO_PORT', DEFAULT_DEMO_MINIAPP_PORT),
  },
  logLevel: process.env.LOG_LEVEL ?? 'info',
});
console.log(`platform:          ${stack.platform.url}`);
console.log(`demo miniapp:      ${stack.miniappUrl}`);
console.log(`host-app simulator: ${stack.simulatorUrl}`);
const stop = () => void stack.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
