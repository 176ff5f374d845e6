import { createClient, type Client, type ClientOptions } from 'graphql-ws';
import WebSocket from 'ws';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { sourceOf } from './documents.ts';

const open = new Set<Client>();

/**
 * A graphql-ws client of the gateway at `baseUrl` (http or ws), with the key in the connection
 * parameters (none without one), no retries, and tracked so `disposeClients()` closes it.
 */
export function wsClient(baseUrl: string, key?: string, options: Partial<ClientOptions> = {}): Client {
  const client = createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: key ? { authorization: `Bearer ${key}` } : {},
    retryAttempts: 0,
    ...options,
  });
  open.add(client);
  return client;
}

/** Disposes every client `wsClient` made (in an afterEach or afterAll). */
export async function disposeClients(): Promise<void> {
  const clients = [...open];
  open.clear();
  await Promise.all(clients.map((c) => c.dispose()));
}

/** The code a client's socket closes with (e.g. 4401), resolved on its `closed` event. */
export function closeCode(client: Client): Promise<number> {
  return new Promise((resolve) => client.on('closed', (event) => resolve((event as { code: number }).code)));
}

export interface Collected<T> {
  items: T[];
  /** Resolves with every item once the subscription completes or `until` accepts the items so far. */
  done: Promise<T[]>;
  /** Resolves at the first item: the server's subscription is in place by then. Rejects if there is none. */
  first: Promise<T>;
  stop(): void;
}

/** Subscribes and collects `field` of each result; a GraphQL error rejects `done`. A typed document types the items. */
export function collect<TData, TVariables, K extends keyof TData & string>(
  client: Client,
  document: TypedDocumentNode<TData, TVariables>,
  variables: NoInfer<TVariables>,
  field: K,
  until?: (items: TData[K][]) => boolean,
): Collected<TData[K]>;
export function collect<T>(
  client: Client,
  query: string,
  variables: Record<string, unknown>,
  field: string,
  until?: (items: T[]) => boolean,
): Collected<T>;
export function collect<T>(
  client: Client,
  document: TypedDocumentNode | string,
  variables: unknown,
  field: string,
  until?: (items: T[]) => boolean,
): Collected<T> {
  const items: T[] = [];
  let gotFirst!: (item: T) => void;
  let noFirst!: (err: Error) => void;
  const first = new Promise<T>((resolve, reject) => {
    gotFirst = resolve;
    noFirst = reject;
  });
  let stop = () => {};
  const done = new Promise<T[]>((resolveDone, rejectDone) => {
    // Failing or ending before the first item fails `first` too (a no-op once it has resolved).
    const resolve = (all: T[]) => {
      noFirst(new Error(`${field} completed without an item`));
      resolveDone(all);
    };
    const reject = (err: Error) => {
      noFirst(err);
      rejectDone(err);
    };
    stop = client.subscribe<Record<string, T>>(
      { query: sourceOf(document), variables: variables as Record<string, unknown> },
      {
        next: (result) => {
          if (result.errors) reject(new Error(JSON.stringify(result.errors)));
          if (result.data) {
            items.push(result.data[field]!);
            if (items.length === 1) gotFirst(items[0]!);
          }
          if (until?.(items)) {
            stop();
            resolve(items);
          }
        },
        error: (err) => reject(err instanceof Error ? err : new Error(JSON.stringify(err))),
        complete: () => resolve(items),
      },
    );
  });
  // A test that never awaits `first` is not failed by it; one that does sees the subscription's error.
  first.catch(() => {});
  return { items, done, first, stop: () => stop() };
}
