import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The line a child server prints once it listens; see startChild. */
export function announce(url: string): void {
  process.stdout.write(`READY ${url}\n`);
}

export function localUrl(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes `server` on SIGTERM/SIGINT, then exits. */
export function exitOnSignal(close: () => Promise<void> | void): void {
  const stop = async () => {
    await close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
