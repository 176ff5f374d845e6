import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

/**
 * A local stand-in for the subset of Apify's API v2 the connector uses, written from the public
 * reference (docs.apify.com/api/v2): start an actor run (`POST /v2/acts/{actorId}/runs`, which the
 * official client calls as `/v2/actors/{actorId}/runs`; input as the
 * JSON body, run options as query parameters), get a run (`GET /v2/actor-runs/{runId}`, holding the
 * answer up to `waitForFinish` seconds until the run ends), abort it (`POST
 * /v2/actor-runs/{runId}/abort`), and read a dataset's items (`GET /v2/datasets/{datasetId}/items`
 * with offset, limit and clean, answering a JSON array with the X-Apify-Pagination-* headers). Answers
 * are `{ data }`; errors `{ error: { type, message } }` with the API's status codes. The token is the
 * `Authorization: Bearer` header the official client sends.
 *
 * A run does nothing by itself: the test pushes items and moves its status, as an actor would.
 */

export type FakeStatus =
  | 'READY'
  | 'RUNNING'
  | 'SUCCEEDED'
  | 'FAILED'
  | 'TIMING-OUT'
  | 'TIMED-OUT'
  | 'ABORTING'
  | 'ABORTED';
const ENDED: FakeStatus[] = ['SUCCEEDED', 'FAILED', 'TIMED-OUT', 'ABORTED'];

export interface FakeRun {
  id: string;
  actId: string;
  status: FakeStatus;
  statusMessage: string | null;
  defaultDatasetId: string;
  usageTotalUsd: number;
  /** The JSON body the run was started with. */
  input: unknown;
  /** The run options of the start request's query string (maxItems, maxTotalChargeUsd, timeout, memory…). */
  options: Record<string, string>;
  items: Record<string, unknown>[];
  /** Abort requests received. */
  aborts: number;
  /** Adds items to the run's dataset. */
  push(...items: Record<string, unknown>[]): void;
  /** Moves the run to a status, with the actor's status message. */
  set(status: FakeStatus, message?: string | null): void;
}

export interface RequestLog {
  method: string;
  path: string;
  status: number;
}

export interface FakeApify {
  url: string;
  token: string;
  runs: FakeRun[];
  requests: RequestLog[];
  /** Actors that exist (as the API names them, `user~name`); others answer 404. */
  actors: Set<string>;
  /** The next `times` requests whose path matches answer `status` with an error body. */
  fail(path: RegExp, status: number, times?: number): void;
  /** Forgets the faults not yet answered. */
  clearFaults(): void;
  /** Resolves with the next run started. */
  nextRun(): Promise<FakeRun>;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid-input',
  401: 'token-not-valid',
  402: 'not-enough-usage-to-run-paid-actor',
  404: 'record-not-found',
  429: 'rate-limit-exceeded',
  500: 'internal-server-error',
  503: 'server-overloaded',
};

const id = () =>
  randomBytes(9)
    .toString('base64url')
    .replace(/[^A-Za-z0-9]/g, 'x')
    .slice(0, 17);

export async function startFakeApify(options: { actors?: string[]; token?: string } = {}): Promise<FakeApify> {
  const token = options.token ?? 'apify_api_test_token';
  const runs: FakeRun[] = [];
  const requests: RequestLog[] = [];
  const faults: { path: RegExp; status: number; times: number }[] = [];
  const waiters = new Set<() => void>();
  const runWaiters: ((run: FakeRun) => void)[] = [];
  const wake = () => {
    for (const w of [...waiters]) w();
  };

  const makeRun = (actId: string, input: unknown, query: URLSearchParams): FakeRun => {
    const run: FakeRun = {
      id: id(),
      actId,
      status: 'RUNNING',
      statusMessage: null,
      defaultDatasetId: id(),
      usageTotalUsd: 0,
      input,
      options: Object.fromEntries(query.entries()),
      items: [],
      aborts: 0,
      push(...items) {
        run.items.push(...items);
        wake();
      },
      set(status, message) {
        run.status = status;
        if (message !== undefined) run.statusMessage = message;
        wake();
      },
    };
    return run;
  };

  const view = (run: FakeRun) => ({
    id: run.id,
    actId: run.actId,
    status: run.status,
    statusMessage: run.statusMessage,
    startedAt: new Date().toISOString(),
    finishedAt: ENDED.includes(run.status) ? new Date().toISOString() : null,
    defaultDatasetId: run.defaultDatasetId,
    defaultKeyValueStoreId: `${run.id}-kvs`,
    usageTotalUsd: run.usageTotalUsd,
    options: { memoryMbytes: Number(run.options.memory ?? 1024), timeoutSecs: Number(run.options.timeout ?? 0) },
  });

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, status: number, message: string) =>
    send(res, status, { error: { type: ERROR_TYPES[status] ?? 'error', message } });

  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => resolve(body));
    });

  const waitForEnd = (run: FakeRun, secs: number) =>
    new Promise<void>((resolve) => {
      if (secs <= 0 || ENDED.includes(run.status)) return resolve();
      const done = () => {
        if (!ENDED.includes(run.status)) return;
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(done);
        resolve();
      }, Math.min(secs, 60) * 1000);
      waiters.add(done);
    });

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const log: RequestLog = { method: req.method ?? 'GET', path: url.pathname, status: 0 };
      requests.push(log);
      res.on('finish', () => (log.status = res.statusCode));
      const body = await readBody(req);
      const fault = faults.find((f) => f.path.test(url.pathname) && f.times > 0);
      if (fault) {
        fault.times -= 1;
        return error(res, fault.status, `Injected ${fault.status}`);
      }
      if (req.headers.authorization !== `Bearer ${token}`) return error(res, 401, 'Authentication token is not valid.');
      const startRoute = req.method === 'POST' ? /^\/v2\/(?:acts|actors)\/([^/]+)\/runs$/.exec(url.pathname) : null;
      if (startRoute) {
        const actId = decodeURIComponent(startRoute[1]!);
        if (!actors.has(actId)) return error(res, 404, 'Actor was not found');
        let input: unknown;
        try {
          input = body ? JSON.parse(body) : {};
        } catch {
          return error(res, 400, 'Input is not valid JSON');
        }
        const run = makeRun(actId, input, url.searchParams);
        runs.push(run);
        for (const w of runWaiters.splice(0)) w(run);
        return send(res, 201, { data: view(run) });
      }
      const runRoute = /^\/v2\/actor-runs\/([^/]+)(\/abort)?$/.exec(url.pathname);
      if (runRoute) {
        const run = runs.find((r) => r.id === runRoute[1]);
        if (!run) return error(res, 404, 'Actor run was not found');
        if (runRoute[2] && req.method === 'POST') {
          run.aborts += 1;
          if (!ENDED.includes(run.status)) run.set('ABORTED', 'Aborted by the caller');
          return send(res, 200, { data: view(run) });
        }
        if (req.method !== 'GET') return error(res, 400, 'Method not allowed');
        await waitForEnd(run, Number(url.searchParams.get('waitForFinish') ?? 0));
        return send(res, 200, { data: view(run) });
      }
      const itemsRoute = req.method === 'GET' ? /^\/v2\/datasets\/([^/]+)\/items$/.exec(url.pathname) : null;
      if (itemsRoute) {
        const run = runs.find((r) => r.defaultDatasetId === itemsRoute[1]);
        if (!run) return error(res, 404, 'Dataset was not found');
        const offset = Number(url.searchParams.get('offset') ?? 0);
        const limit = Number(url.searchParams.get('limit') ?? 999_999_999_999);
        const clean = ['1', 'true'].includes(url.searchParams.get('clean') ?? '');
        // clean skips empty items and hidden (#-prefixed) fields after paging, as the API does.
        const page = run.items
          .slice(offset, offset + limit)
          .filter((item) => !clean || Object.keys(item).length > 0)
          .map((item) => (clean ? Object.fromEntries(Object.entries(item).filter(([k]) => !k.startsWith('#'))) : item));
        return send(res, 200, page, {
          'x-apify-pagination-offset': String(offset),
          'x-apify-pagination-limit': String(limit),
          'x-apify-pagination-count': String(page.length),
          'x-apify-pagination-total': String(run.items.length),
          'x-apify-pagination-desc': 'false',
        });
      }
      return error(res, 404, `No route ${req.method} ${url.pathname}`);
    })().catch((err: unknown) => {
      if (!res.headersSent) error(res, 500, (err as Error).message);
    });
  });
  const actors = new Set(options.actors ?? []);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    token,
    runs,
    requests,
    actors,
    fail(path, status, times = 1) {
      faults.push({ path, status, times });
    },
    clearFaults() {
      faults.length = 0;
    },
    nextRun() {
      return new Promise((resolve) => runWaiters.push(resolve));
    },
    async close() {
      wake();
      for (const run of runs) if (!ENDED.includes(run.status)) run.status = 'ABORTED';
      wake();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
