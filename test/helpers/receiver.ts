import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from './wait.ts';

/** A request the receiver got. */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

/**
 * A local receiver for webhooks on loopback: records every request and answers each one to a path with
 * the next status scripted for it, else `status(path)` (200 by default).
 */
export async function startReceiver(options: { status?: (path: string) => number } = {}) {
  const received: Received[] = [];
  const script = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({ headers: req.headers, body, path });
      res.writeHead(script.get(path)?.shift() ?? options.status?.(path) ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    /** Statuses for the next requests to `path`, in order. */
    answer: (path: string, ...statuses: number[]) => script.set(path, [...(script.get(path) ?? []), ...statuses]),
    async until(count: (r: Received[]) => boolean, timeoutMs = 20_000) {
      await waitFor(
        () => received.map((r) => r.path),
        () => count(received),
        { timeoutMs, what: 'the receiver to get the expected requests' },
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
