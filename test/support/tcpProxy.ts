import { createServer, connect, type Server, type Socket } from 'node:net';

interface Pair {
  client: Socket;
  upstream: Socket | undefined;
  /** Held by a partition: neither side hears from the other. */
  silent: boolean;
}

/**
 * A TCP proxy between a platform and its PostgreSQL that a test can cut: the network as the
 * platform sees it, failing the way real ones do. `cut('reset')` resets every open connection
 * and every new one (a database restarting, a failover); `cut('blackhole')` leaves open ones
 * silent and accepts new ones without ever answering (a partition); `restore()` forwards again.
 * It counts the connections the platform opens, so a test can bound them.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly pairs = new Set<Pair>();
  private mode: 'forward' | 'reset' | 'blackhole' = 'forward';
  /** Connections accepted since start (or since the last `resetCounts`). */
  accepted = 0;
  /** Most connections open at once since start (or since the last `resetCounts`). */
  peakOpen = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on a free loopback port; returns it. */
  async start(): Promise<number> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as { port: number }).port;
  }

  /** The port it listens on. */
  get port(): number {
    return (this.server!.address() as { port: number }).port;
  }

  /** Connections open now. */
  get open(): number {
    return this.pairs.size;
  }

  resetCounts(): void {
    this.accepted = 0;
    this.peakOpen = this.pairs.size;
  }

  cut(how: 'reset' | 'blackhole'): void {
    this.mode = how;
    if (how === 'reset') for (const pair of [...this.pairs]) this.drop(pair);
    else for (const pair of this.pairs) this.silence(pair);
  }

  restore(): void {
    this.mode = 'forward';
    // Connections held silent through a partition are dead to both ends by now: reset them.
    for (const pair of [...this.pairs]) if (pair.silent) this.drop(pair);
  }

  async stop(): Promise<void> {
    for (const pair of [...this.pairs]) this.drop(pair);
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: Socket): void {
    this.accepted += 1;
    client.on('error', () => undefined);
    if (this.mode === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const pair: Pair = { client, upstream: undefined, silent: false };
    this.pairs.add(pair);
    this.peakOpen = Math.max(this.peakOpen, this.pairs.size);
    client.on('close', () => this.drop(pair));
    if (this.mode === 'blackhole') {
      this.silence(pair);
      return;
    }
    const upstream = connect(this.targetPort, this.targetHost);
    pair.upstream = upstream;
    upstream.on('error', () => this.drop(pair));
    upstream.on('close', () => this.drop(pair));
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Nothing passes either way, and nothing says so. */
  private silence(pair: Pair): void {
    pair.silent = true;
    pair.client.unpipe();
    pair.upstream?.unpipe();
    pair.client.pause();
    pair.upstream?.pause();
  }

  private drop(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    if (!pair.client.destroyed) pair.client.resetAndDestroy();
    pair.upstream?.destroy();
  }
}
