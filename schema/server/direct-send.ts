import type { Duplex } from 'node:stream';
import { MessageType } from 'graphql-ws';
import type { WebSocket } from 'ws';
import type { DirectSend } from './shared-subscriptions.ts';

/** Connections corked during this turn's fan-out, uncorked together when the turn is over (see directSend). */
const corked = new Set<Duplex>();

/** Holds a connection's writes until the fan-out of this turn is over. */
function corkForThisTurn(connection: Duplex) {
  if (corked.has(connection)) return;
  if (corked.size === 0) {
    setImmediate(() => {
      const held = [...corked];
      corked.clear();
      for (const c of held) c.uncork();
    });
  }
  connection.cork();
  corked.add(connection);
}

/**
 * Sends a shared subscription's result to one subscriber as graphql-ws's own `next` message
 * (`{"id":…,"type":"next","payload":…}`, byte for byte what its `stringifyMessage` writes), the payload
 * serialised once for every subscriber; false once the socket is no longer open. The connection is
 * corked until the fan-out's turn is over, so what graphql-ws sends in the same turn leaves with it in
 * one write: a run's last result and the `complete` that follows it cost one system call per
 * subscriber, not two. (`_socket` is ws's connection; ws corks it itself around each frame.)
 */
export function directSend(socket: WebSocket, id: string): DirectSend {
  const head = `{"id":${JSON.stringify(id)},"type":"${MessageType.Next}","payload":`;
  const connection = (socket as unknown as { _socket?: Duplex })._socket;
  return {
    send(resultJson) {
      if (socket.readyState !== socket.OPEN) return false;
      if (connection) corkForThisTurn(connection);
      socket.send(`${head}${resultJson}}`);
      return true;
    },
  };
}
