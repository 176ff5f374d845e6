import type { WebSocket, WebSocketServer } from 'ws';

/**
 * How often each socket is pinged; one that has not answered the
 * previous ping by then is dropped (graphql-ws's default).
 */
const KEEP_ALIVE_MS = 12_000;
const KEEP_ALIVE_SLICES = 12;

/**
 * graphql-ws's keep-alive (a ping every 12 s, a socket that has not answered by the next one is
 * terminated) from one timer for every socket, instead of an interval per socket and a timeout and
 * listener per ping: the sockets are spread over 12 slices pinged one per second, so pings do not come
 * in one burst.
 */
export function keepAlive(wss: WebSocketServer) {
  const slices = Array.from({ length: KEEP_ALIVE_SLICES }, () => new Set<WebSocket>());
  const waiting = new WeakSet<WebSocket>();
  let next = 0;
  let turn = 0;
  function answered(this: WebSocket) {
    waiting.delete(this);
  }
  wss.on('connection', (socket) => {
    const slice = slices[next++ % KEEP_ALIVE_SLICES];
    slice?.add(socket);
    socket.on('pong', answered);
    socket.once('close', () => slice?.delete(socket));
  });
  const timer = setInterval(() => {
    for (const socket of slices[turn++ % KEEP_ALIVE_SLICES] ?? []) {
      if (socket.readyState !== socket.OPEN) continue;
      if (waiting.has(socket)) {
        socket.terminate();
        continue;
      }
      waiting.add(socket);
      socket.ping();
    }
  }, KEEP_ALIVE_MS / KEEP_ALIVE_SLICES);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
