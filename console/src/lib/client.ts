import { cacheExchange, Client, fetchExchange, mapExchange, subscriptionExchange } from 'urql';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';

/**
 * The console's GraphQL client for one session: HTTP with the session cookie and its CSRF token in
 * X-CSRF-Token, subscriptions over graphql-ws with the token in connectionParams (the socket's
 * upgrade request carries the cookie). A socket closed 4401 (session revoked) is not retried; an HTTP
 * answer 401 (the session ended: signed out elsewhere, expired, revoked) calls `onSessionEnded`.
 */
export function createGraphQLClient(
  csrfToken: string,
  onSessionEnded: () => void,
): { client: Client; dispose(): void } {
  let ws: WsClient | undefined;
  const socket = () =>
    (ws ??= createWsClient({
      url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
      connectionParams: { csrfToken },
      lazy: true,
      retryAttempts: 3,
    }));
  const client = new Client({
    url: '/graphql',
    preferGetMethod: false,
    fetchOptions: () => ({ credentials: 'same-origin', headers: { 'x-csrf-token': csrfToken } }),
    exchanges: [
      cacheExchange,
      mapExchange({
        onError(error) {
          if (error.response?.status === 401) onSessionEnded();
        },
      }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: socket().subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
  return { client, dispose: () => void ws?.dispose() };
}
