import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Tracks which connections have a request in progress, so a graceful stop can close every other
 * connection at once and each busy one as soon as its answer is written (that answer says
 * `Connection: close`). Node's own closeIdleConnections() counts a connection as busy from the
 * moment it is accepted until a request completes, so a client's spare keep-alive connection
 * would hold the stop for the whole keep-alive time-out.
 */
export function trackConnections(server: Server): { closeWhenIdle(): void } {
  const inProgress = new Map<Socket, Set<ServerResponse>>();
  let stopping = false;
  const lastAnswer = (res: ServerResponse) => {
    if (!res.headersSent) res.shouldKeepAlive = false;
  };
  server.on('connection', (socket: Socket) => {
    inProgress.set(socket, new Set());
    socket.once('close', () => inProgress.delete(socket));
  });
  server.on('request', (req, res: ServerResponse) => {
    const socket = req.socket;
    const responses = inProgress.get(socket) ?? new Set();
    inProgress.set(socket, responses.add(res));
    if (stopping) lastAnswer(res);
    res.once('close', () => {
      responses.delete(res);
      if (stopping && responses.size === 0) socket.end();
    });
  });
  return {
    closeWhenIdle() {
      stopping = true;
      for (const [socket, responses] of inProgress) {
        if (responses.size === 0) socket.end();
        else responses.forEach(lastAnswer);
      }
    },
  };
}
