import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { print, type GraphQLFormattedError } from 'graphql';
import type { Client } from 'graphql-ws';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import WebSocket from 'ws';
import { revokeApiKey } from '../../../src/accounts/accounts.ts';
import { BODY_LIMIT } from '../../../src/app.ts';
import { MAX_TOKENS } from '../../../schema/server/token-limit.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';
import { runCount } from '../../helpers/runs.ts';
import { waitFor } from '../../helpers/wait.ts';
import { sourceOf } from '../../helpers/documents.ts';
import { closeCode, disposeClients, wsClient } from '../../helpers/ws.ts';
import { graphql } from '../../helpers/gql/index.ts';

/**
 * graphql-ws under the HTTP rules: each `subscribe` message pays the key's per-minute toll and checks
 * the key again (a revoked key stops working on an open socket within the key cache time, and closes
 * it with 4401); a bad key at connect closes with 4401, which clients do not retry; messages are capped
 * like HTTP bodies; documents get the same token limit and complexity checks, at subscription start.
 */

const RATE_LIMIT = 100;
const AUTH_CACHE_SECS = 1;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ config: { rateLimitPerMinute: RATE_LIMIT, authCacheSecs: AUTH_CACHE_SECS } });
});
afterEach(() => disposeClients());
afterAll(() => t?.stop());

interface WsResult<TData> {
  via: 'next' | 'error';
  data?: TData | null;
  errors?: readonly GraphQLFormattedError[];
}

/**
 * One operation over the socket: its first result (`next`), or the errors it was refused with (`error`).
 * A string is a document the socket must refuse (too large, too deep, too broad, not parsing).
 */
function operation<TData, TVariables>(
  client: Client,
  document: TypedDocumentNode<TData, TVariables> | string,
  variables?: NoInfer<TVariables>,
): Promise<WsResult<TData>> {
  return new Promise((resolve, reject) => {
    let first: WsResult<TData> | undefined;
    client.subscribe<TData>(
      { query: sourceOf(document), variables: variables as Record<string, unknown> | undefined },
      {
        next: (r) => {
          first ??= { via: 'next', ...r };
        },
        error: (e) =>
          Array.isArray(e)
            ? resolve({ via: 'error', errors: e })
            : reject(Object.assign(new Error('socket closed'), { code: (e as { code?: number }).code })),
        complete: () => resolve(first ?? { via: 'next' }),
      },
    );
  });
}

/** A client that connects at once and stays connected, counting its connection attempts. */
function openClient(key: string | undefined, extra: Record<string, unknown> = {}) {
  const seen = { opened: 0, closed: [] as number[] };
  const client = wsClient(t.url, key, {
    lazy: false,
    onNonLazyError: () => {},
    on: { opened: () => void seen.opened++, closed: (e) => void seen.closed.push((e as { code: number }).code) },
    ...extra,
  });
  return { client, seen };
}

const Typename = graphql(`query WsTypename { __typename }`);
const ViewerId = graphql(`query WsViewerId { viewer { id } }`);
const StartMaps = graphql(
  `mutation WsStartMaps($input: StartMapsScrapeInput!) { startMapsScrape(input: $input) { __typename } }`,
);
const runsOf = (accountId: string) => runCount(t.app.core.sql, accountId);

describe('each operation pays the HTTP toll', () => {
  it(`counts opening the socket and every subscribe message against the key's ${RATE_LIMIT} per minute, shared with HTTP; past it RATE_LIMITED with retryAfter`, async () => {
    const { apiKey } = await t.account();
    const { client, seen } = openClient(apiKey);
    // The socket opens with the first operation; its connection_init is one request.
    for (let i = 0; i < RATE_LIMIT / 2 - 1; i++) {
      const res = await t.graphql(apiKey, Typename);
      expect(res.status).toBe(200);
    }
    for (let i = 0; i < RATE_LIMIT / 2; i++) {
      const res = await operation(client, Typename);
      expect(res.errors).toBeUndefined();
      expect(res.data).toEqual({ __typename: 'Query' });
    }
    const refused = await operation(client, Typename);
    expect(refused.via).toBe('error');
    expect(refused.data).toBeUndefined();
    const [error] = refused.errors!;
    expect(error!.extensions!.code).toBe('RATE_LIMITED');
    expect(error!.extensions!.retryAfter).toBeGreaterThanOrEqual(1);
    expect(error!.extensions!.retryAfter).toBeLessThanOrEqual(60);
    expect(error!.extensions).not.toHaveProperty('http');
    // The socket stays open for later; HTTP is over the budget too, with the same retryAfter shape.
    expect(seen.closed).toEqual([]);
    const http = await t.graphql(apiKey, Typename);
    expect(http.status).toBe(429);
    expect(http.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(http.body.errors?.[0]?.extensions?.retryAfter).toBe(Number(http.headers.get('retry-after')));
    expect(http.headers.get('ratelimit')).toMatch(/remaining=0/);
  });

  it('a key revoked while its sockets are open closes them within the key cache time, unasked: no paid run starts', async () => {
    const { apiKey, accountId } = await t.account();
    const a = openClient(apiKey);
    const b = openClient(apiKey);
    // Both sockets work (and the key is cached) before the revocation.
    for (const { client } of [a, b]) expect((await operation(client, ViewerId)).data!.viewer.id).toBe(accountId);
    const wallet = await t.walletMicros(accountId);

    // Revoked from outside this process's requests (as another gateway would): nothing clears its cache.
    await t.app.core.sql`update api_key set revoked_at = now() where prefix = ${apiKey.slice(0, 14)}`;
    const revokedAt = Date.now();
    // Both sockets close with 4401 without sending anything, within the key cache time (and a second's margin).
    await waitFor(
      () => [a.seen.closed, b.seen.closed],
      (codes) => codes.every((c) => c.length > 0),
      {
        timeoutMs: (AUTH_CACHE_SECS + 5) * 1000,
        what: 'both sockets to close',
      },
    );
    expect(Date.now() - revokedAt).toBeLessThan((AUTH_CACHE_SECS + 2) * 1000);
    expect([a.seen.closed, b.seen.closed]).toEqual([[4401], [4401]]);
    expect([a.seen.opened, b.seen.opened]).toEqual([1, 1]);

    // Asking again on a new socket is refused at connect: no paid run starts.
    const again = wsClient(t.url, apiKey);
    await expect(operation(again, StartMaps, { input: DENVER_DENTISTS })).rejects.toMatchObject({ code: 4401 });
    expect(await runsOf(accountId)).toBe(0);
    expect(await t.walletMicros(accountId)).toBe(wallet);
  });

  it('a live key starts the same paid run over the socket (the refusal above is the key’s, not the mutation’s)', async () => {
    const { apiKey, accountId } = await t.account();
    const { client } = openClient(apiKey);
    const started = await operation(client, StartMaps, { input: DENVER_DENTISTS });
    expect(started.errors).toBeUndefined();
    expect(await runsOf(accountId)).toBe(1);
  });
});

describe('a bad key closes the socket with 4401', () => {
  it('closes with 4401 for a missing, malformed, unknown or revoked key, and graphql-ws does not retry it', async () => {
    const revoked = await t.account();
    await revokeApiKey(t.app.core.db, revoked.apiKey.slice(0, 14));
    const params = [
      {},
      { authorization: 'Bearer nope' },
      { authorization: `Bearer lg_live_${'Q'.repeat(32)}` },
      { authorization: `Bearer ${revoked.apiKey}` },
    ];
    for (const connectionParams of params) {
      // Retries allowed and immediate: a 4403 would be tried again, 4401 is final.
      const { client, seen } = openClient(undefined, { connectionParams, retryAttempts: 3, retryWait: async () => {} });
      const closed = closeCode(client);
      const refused = operation(client, Typename);
      await expect(refused).rejects.toMatchObject({ code: 4401 });
      expect(await closed).toBe(4401);
      expect(seen.opened, JSON.stringify(connectionParams)).toBe(1);
    }
  });
});

describe('messages are capped at 1 MB like HTTP bodies', () => {
  /** A raw graphql-transport-ws socket, acknowledged. */
  async function rawSocket(key: string): Promise<WebSocket> {
    const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.once('open', () =>
        socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } })),
      );
      socket.once('message', (data) =>
        JSON.parse(String(data)).type === 'connection_ack' ? resolve() : reject(new Error(String(data))),
      );
    });
    return socket;
  }
  const closed = (socket: WebSocket) => new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  const subscribe = (id: string, query: string) => JSON.stringify({ id, type: 'subscribe', payload: { query } });

  it('closes a socket whose message is 1.5 MB with 1009; the server stays healthy', async () => {
    const { apiKey } = await t.account();
    const socket = await rawSocket(apiKey);
    const code = closed(socket);
    const message = subscribe('big', `{ __typename } # ${'x'.repeat(1.5 * 1024 * 1024)}`);
    expect(message.length).toBeGreaterThan(BODY_LIMIT);
    socket.send(message);
    expect(await code).toBe(1009);

    expect((await t.request('GET', '/health')).status).toBe(200);
    const next = openClient(apiKey);
    expect((await operation(next.client, Typename)).data).toEqual({ __typename: 'Query' });
  });

  it('answers a message under 1 MB (a document over the token limit is refused, the socket stays open)', async () => {
    const { apiKey } = await t.account();
    const socket = await rawSocket(apiKey);
    const answers: { id?: string; type: string; payload?: unknown }[] = [];
    socket.on('message', (data) => answers.push(JSON.parse(String(data))));
    const message = subscribe('under', `{ ${'a '.repeat(450 * 1024)}}`);
    expect(message.length).toBeLessThan(BODY_LIMIT);
    expect(message.length).toBeGreaterThan(BODY_LIMIT * 0.8);
    socket.send(message);
    socket.send(subscribe('after', print(Typename)));
    await waitFor(
      () => answers,
      (a) => a.some((m) => m.id === 'after' && m.type === 'complete'),
      { what: 'both answers' },
    );
    expect(answers.find((m) => m.id === 'under')).toMatchObject({
      type: 'error',
      payload: [{ extensions: { code: 'QUERY_TOO_COMPLEX', details: { measure: 'tokens' } } }],
    });
    expect(answers.find((m) => m.id === 'after' && m.type === 'next')?.payload).toEqual({
      data: { __typename: 'Query' },
    });
    expect(socket.readyState).toBe(WebSocket.OPEN);
    socket.close();
  });
});

describe('document limits over the socket', () => {
  it('refuses a selection nested 5,000 deep with QUERY_TOO_COMPLEX (tokens); the socket goes on', async () => {
    const { apiKey } = await t.account();
    const { client, seen } = openClient(apiKey);
    const deep = `${'{ a '.repeat(5000)}${'}'.repeat(5000)}`;
    const refused = await operation(client, deep);
    expect(refused.via).toBe('error');
    expect(refused.errors).toHaveLength(1);
    expect(refused.errors![0]!.extensions).toEqual({
      code: 'QUERY_TOO_COMPLEX',
      details: { measure: 'tokens', limit: MAX_TOKENS },
    });
    const subscription = await operation(client, `subscription ${deep}`);
    expect(subscription.errors![0]!.extensions!.code).toBe('QUERY_TOO_COMPLEX');
    expect((await operation(client, Typename)).data).toEqual({ __typename: 'Query' });
    expect(seen.closed).toEqual([]);
    expect(seen.opened).toBe(1);
  });

  it('checks a subscription’s breadth when it starts, before any event, naming the measure and its value', async () => {
    // A new account has no run in flight: runEvents would send nothing until one changes.
    const { apiKey, accountId } = await t.account();
    const { client } = openClient(apiKey);
    const aliases = Array.from({ length: 201 }, (_, i) => `a${i}: __typename`).join(' ');
    const refused = await operation(client, `subscription { runEvents { ${aliases} } }`);
    expect(refused.via).toBe('error');
    expect(refused.errors).toEqual([
      {
        message: 'Query breadth 202 exceeds the limit of 200; ask for fewer fields or smaller pages',
        extensions: { code: 'QUERY_TOO_COMPLEX', details: { measure: 'breadth', value: 202, limit: 200 } },
      },
    ]);
    expect(await runsOf(accountId)).toBe(0);
  });

  it('answers a document that does not parse with an error, not a closed socket', async () => {
    const { apiKey } = await t.account();
    const { client, seen } = openClient(apiKey);
    const refused = await operation(client, '{ viewer ');
    expect(refused.via).toBe('error');
    expect(refused.errors![0]!.message).toMatch(/Syntax Error/);
    expect(refused.errors![0]!.extensions ?? {}).not.toHaveProperty('http');
    expect(seen.closed).toEqual([]);
  });
});
