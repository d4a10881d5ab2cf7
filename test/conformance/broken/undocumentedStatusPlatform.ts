import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningServer } from '../reference.js';

/**
 * A platform that breaks one rule: E1 refusals come as HTTP 422 instead of the documented 400.
 * A proxy in front of a real platform, changing that status only.
 */
export async function undocumentedStatusPlatform(platformUrl: string): Promise<RunningServer> {
  const upstream = new URL(platformUrl);
  const server = createServer((incoming, outgoing) => {
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, path: incoming.url, method: incoming.method, headers: incoming.headers },
      (answer) => {
        const isE1Refusal = incoming.url?.startsWith('/api/v1/orders/create-order-payment/') && answer.statusCode === 400;
        outgoing.writeHead(isE1Refusal ? 422 : (answer.statusCode ?? 502), answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
