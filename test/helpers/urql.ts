import { Client, fetchExchange, subscriptionExchange } from '@urql/core';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import WebSocket from 'ws';

const open = new Set<WsClient>();

export interface FrontendClient {
  /** urql over HTTP for queries and mutations, over graphql-ws for subscriptions: a frontend app's client. */
  urql: Client;
  ws: WsClient;
}

/**
 * The client a frontend team uses: urql with the key as a bearer token over HTTP and in the
 * graphql-ws connection parameters, no retries, no cache (every operation reaches the gateway).
 */
export function frontendClient(baseUrl: string, key: string, options: { origin?: string } = {}): FrontendClient {
  const ws = createWsClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${key}` },
    retryAttempts: 0,
    // One socket for the page's life, as an app keeps it: open at once, kept between subscriptions.
    lazy: false,
  });
  open.add(ws);
  const urql = new Client({
    url: `${baseUrl}/graphql`,
    requestPolicy: 'network-only',
    preferGetMethod: false,
    fetchOptions: () => ({
      headers: { authorization: `Bearer ${key}`, ...(options.origin ? { origin: options.origin } : {}) },
    }),
    exchanges: [
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
  return { urql, ws };
}

/** Closes every client `frontendClient` made. */
export async function disposeFrontendClients(): Promise<void> {
  const clients = [...open];
  open.clear();
  await Promise.all(clients.map((c) => c.dispose()));
}
