/**
 * PostgreSQL connections that the server ends at the worst moment (ADR 0037), on PostgreSQL
 * (DATABASE_URL; skipped without it). A front between the pool and the database hands each new
 * connection its ReadyForQuery and, in the same write, the FATAL a backend terminated as it
 * started sends: the driver emits that error while the connection is being handed to its caller.
 * No statement may crash the process; each is answered DatabaseUnavailableError.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../src/platform/store/availability.js';
import { openPostgres, type Db } from '../../src/platform/store/db.js';
import { backends } from '../support/databases.js';

const postgres = backends.find((backend) => backend.name === 'postgres')!;

/** An ErrorResponse message (protocol 3.0) with severity FATAL and SQLSTATE 57P01. */
function terminatedMessage(): Buffer {
  const field = (type: string, value: string) => Buffer.concat([Buffer.from(type), Buffer.from(value), Buffer.from([0])]);
  const fields = Buffer.concat([
    field('S', 'FATAL'),
    field('V', 'FATAL'),
    field('C', '57P01'),
    field('M', 'terminating connection due to administrator command'),
    Buffer.from([0]),
  ]);
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([header, fields]);
}

/**
 * Forwards to PostgreSQL until the server's first ReadyForQuery, then writes everything up to it
 * together with a FATAL and closes: the backend was terminated the moment it became ready.
 */
class TerminatedAtReady {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  connections = 0;

  constructor(private readonly target: URL) {}

  async start(): Promise<URL> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const url = new URL(this.target);
    url.hostname = '127.0.0.1';
    url.port = String((this.server.address() as { port: number }).port);
    return url;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: Socket): void {
    this.connections += 1;
    const upstream = connect(Number(this.target.port || 5432), this.target.hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => this.sockets.delete(socket));
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    // The server's messages are held until the first ReadyForQuery ('Z'), then sent with the FATAL.
    let held = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      held = Buffer.concat([held, chunk]);
      for (let at = 0; at + 5 <= held.length;) {
        const end = at + 1 + held.readInt32BE(at + 1);
        if (end > held.length) break;
        if (held[at] === 0x5a) {
          upstream.destroy();
          client.end(Buffer.concat([held.subarray(0, end), terminatedMessage()]));
          return;
        }
        at = end;
      }
    });
  }
}

describe.skipIf(postgres.skip)('PostgreSQL connections the server ends (ADR 0037)', () => {
  let front: TerminatedAtReady;
  let frontUrl: URL;
  let db: Db | undefined;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);

  beforeAll(async () => {
    front = new TerminatedAtReady(new URL(process.env.DATABASE_URL!));
    frontUrl = await front.start();
    process.on('uncaughtException', onUncaught);
  });
  afterEach(async () => {
    uncaught.length = 0;
    await db?.close();
    db = undefined;
  });
  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await front?.stop();
  });

  // Each case opens its own pool: the first failure marks the database down, and a second
  // statement would then be refused without a connection.
  it.each([
    ['a transaction', (open: Db) => open.transaction((tx) => tx.query('SELECT 1'))],
    ['a single statement', (open: Db) => open.query('SELECT 1')],
  ])('%s on a connection terminated as it became ready: DatabaseUnavailableError, the process unharmed', async (_, statement) => {
    const connectionsBefore = front.connections;
    db = await openPostgres(frontUrl.toString(), { maxConnections: 2 });
    await expect(statement(db)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    // Give the driver's later events on that connection (its close) a turn of the loop.
    await new Promise((resolve) => setImmediate(resolve));
    expect(front.connections).toBeGreaterThan(connectionsBefore);
    expect(uncaught).toEqual([]);
  });
});
