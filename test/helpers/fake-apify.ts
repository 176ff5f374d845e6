import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';

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
 * As strict as the platform where the connector could go wrong: a run starts READY and is RUNNING a
 * moment later; its `usageTotalUsd` is null until it runs and while an abort settles; an abort answers
 * ABORTING and the run is ABORTED a moment later; a new run (and its dataset) may answer 404 for its
 * first requests (`notFoundAfterStart`), as a replica that has not heard of it does; an actor's price
 * per item is charged as items are pushed and, at the run's `maxTotalChargeUsd`, the platform aborts
 * the run and drops what the actor pushes after; a start whose `maxTotalChargeUsd` is below the actor's
 * minimum charge is refused 400 `max-total-charge-usd-below-minimum`; a start whose input does not fit
 * the actor's published input schema (test/fixtures/apify/input-schemas, its defaults filled in first as
 * the platform does) is refused 400 `invalid-input`, naming the field; the run's input, defaults filled
 * in, is its default key-value store's `INPUT` record (`GET /v2/key-value-stores/{storeId}/records/INPUT`);
 * an actor's runs are listed (`GET /v2/acts/{actorId}/runs` with offset, limit, desc, status,
 * startedAfter and startedBefore) as the API's paginated list; a start whose answer is lost on the way
 * back (`loseStartAnswers`) has started its run all the same.
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
  /** What the run has cost, USD; null while the platform has not counted it. */
  usageTotalUsd: number | null;
  /** Whether the platform has counted the run's cost; while false its usage reads null. Default true. */
  costSettled: boolean;
  /** The JSON body the run was started with. */
  input: unknown;
  /** The input as the run's INPUT record holds it: the body with the schema's defaults filled in. */
  storedInput: unknown;
  startedAt: Date;
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
  /** Actors' prices: per item pushed, and the least a run may be allowed to charge (`maxTotalChargeUsd`). */
  pricing: Map<string, ActorPricing>;
  /** Requests of each new run (its status and its dataset) answered 404 before it is known; default 0. */
  notFoundAfterStart: number;
  /**
   * The next starts whose answers are lost: the run is started, then the connection is dropped before
   * the answer (a timeout or reset as the client sees it); default 0.
   */
  loseStartAnswers: number;
  /** The next `times` requests whose path matches (and method, when given) answer `status` with an error body. */
  fail(path: RegExp, status: number, times?: number, method?: string): void;
  /** Forgets the faults not yet answered. */
  clearFaults(): void;
  /** Resolves with the next run started. */
  nextRun(): Promise<FakeRun>;
  close(): Promise<void>;
}

export interface ActorPricing {
  perItemUsd?: number;
  minimumChargeUsd?: number;
}

/** The published input schema of an actor as a validator, or undefined when the fixtures have none. */
function inputSchemaOf(actor: string): ValidateFunction | undefined {
  let text: string;
  try {
    text = readFileSync(new URL(`../fixtures/apify/input-schemas/${actor}.json`, import.meta.url), 'utf8');
  } catch {
    return undefined;
  }
  return new Ajv({ strict: false, useDefaults: true }).compile(JSON.parse(text));
}

/** The platform's words for an input that does not fit the schema: "Field input.x must …". */
function invalidInput(validate: ValidateFunction): string {
  const [first] = validate.errors ?? [];
  const field = `input${(first?.instancePath ?? '').replace(/\//g, '.')}`;
  const allowed = (first?.params as { allowedValues?: unknown[] } | undefined)?.allowedValues;
  const must = allowed
    ? `must be equal to one of the allowed values: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`
    : (first?.message ?? 'is not valid');
  return `Input is not valid: Field ${field} ${must}`;
}

/** How long a run stays READY, and ABORTING after an abort, ms. */
const MOMENT_MS = 30;

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid-input',
  401: 'token-not-valid',
  403: 'insufficient-permissions',
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

export async function startFakeApify(
  options: { actors?: string[]; token?: string; pricing?: Record<string, ActorPricing> } = {},
): Promise<FakeApify> {
  const token = options.token ?? 'apify_api_test_token';
  const runs: FakeRun[] = [];
  const requests: RequestLog[] = [];
  const faults: { path: RegExp; status: number; times: number; method?: string }[] = [];
  const waiters = new Set<() => void>();
  const runWaiters: ((run: FakeRun) => void)[] = [];
  const wake = () => {
    for (const w of [...waiters]) w();
  };

  /** Requests answered 404 so far, by run id, while it is new. */
  const unknownFor = new Map<string, number>();
  /** Whether a request about `run` is answered 404 as a replica that has not heard of it yet would. */
  const notYetKnown = (run: FakeRun) => {
    const answered = unknownFor.get(run.id) ?? 0;
    if (answered >= fake.notFoundAfterStart) return false;
    unknownFor.set(run.id, answered + 1);
    return true;
  };

  const makeRun = (actId: string, input: unknown, storedInput: unknown, query: URLSearchParams): FakeRun => {
    const perItemUsd = fake.pricing.get(actId)?.perItemUsd ?? 0;
    const maxCharge = query.has('maxTotalChargeUsd') ? Number(query.get('maxTotalChargeUsd')) : Infinity;
    const run: FakeRun = {
      id: id(),
      actId,
      status: 'READY',
      statusMessage: null,
      defaultDatasetId: id(),
      usageTotalUsd: null,
      costSettled: true,
      input,
      storedInput,
      startedAt: new Date(),
      options: Object.fromEntries(query.entries()),
      items: [],
      aborts: 0,
      push(...items) {
        if (ENDED.includes(run.status) || run.status === 'ABORTING') return;
        // An actor that pushes items is running: the platform gave it a server.
        if (run.status === 'READY') run.set('RUNNING');
        for (const item of items) {
          const usage = run.usageTotalUsd ?? 0;
          // The platform charges each item; past the run's limit it aborts the run instead.
          if (usage + perItemUsd > maxCharge + 1e-9) {
            abort(run);
            break;
          }
          run.items.push(item);
          run.usageTotalUsd = usage + perItemUsd;
        }
        wake();
      },
      set(status, message) {
        run.status = status;
        if (status !== 'READY' && run.usageTotalUsd === null) run.usageTotalUsd = 0;
        if (message !== undefined) run.statusMessage = message;
        wake();
      },
    };
    setTimeout(() => run.status === 'READY' && run.set('RUNNING'), MOMENT_MS).unref();
    return run;
  };

  /** Aborts a run as the platform does: ABORTING (its cost not counted yet), then ABORTED a moment later. */
  const abort = (run: FakeRun) => {
    if (ENDED.includes(run.status) || run.status === 'ABORTING') return;
    const counted = run.usageTotalUsd ?? 0;
    run.status = 'ABORTING';
    run.usageTotalUsd = null;
    setTimeout(() => {
      run.usageTotalUsd = counted;
      run.set('ABORTED');
    }, MOMENT_MS).unref();
    wake();
  };

  /** A run as the run list shows it (ActorRunListItem). */
  const listView = (run: FakeRun) => ({
    id: run.id,
    actId: run.actId,
    status: run.status,
    startedAt: run.startedAt.toISOString(),
    finishedAt: ENDED.includes(run.status) ? new Date().toISOString() : null,
    buildId: 'fakeBuild00000001',
    buildNumber: '0.0.1',
    meta: { origin: 'API' },
    usageTotalUsd: run.costSettled ? run.usageTotalUsd : null,
    defaultKeyValueStoreId: `${run.id}-kvs`,
    defaultDatasetId: run.defaultDatasetId,
    defaultRequestQueueId: `${run.id}-rq`,
  });
  const view = (run: FakeRun) => ({
    ...listView(run),
    statusMessage: run.statusMessage,
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
      const fault = faults.find(
        (f) => f.path.test(url.pathname) && f.times > 0 && (!f.method || f.method === req.method),
      );
      if (fault) {
        fault.times -= 1;
        return error(res, fault.status, `Injected ${fault.status}`);
      }
      if (req.headers.authorization !== `Bearer ${token}`) return error(res, 401, 'Authentication token is not valid.');
      const startRoute = req.method === 'POST' ? /^\/v2\/(?:acts|actors)\/([^/]+)\/runs$/.exec(url.pathname) : null;
      if (startRoute) {
        const actId = decodeURIComponent(startRoute[1]!);
        if (!actors.has(actId)) return error(res, 404, 'Actor was not found');
        const minimum = fake.pricing.get(actId)?.minimumChargeUsd;
        const allowed = Number(url.searchParams.get('maxTotalChargeUsd') ?? Infinity);
        if (minimum !== undefined && allowed < minimum)
          return send(res, 400, {
            error: {
              type: 'max-total-charge-usd-below-minimum',
              message: `Maximum cost per run is less than the allowed minimum of $${minimum.toFixed(2)}`,
            },
          });
        let input: unknown;
        try {
          input = body ? JSON.parse(body) : {};
        } catch {
          return error(res, 400, 'Input is not valid JSON');
        }
        const validate = schemas.has(actId) ? schemas.get(actId) : inputSchemaOf(actId);
        schemas.set(actId, validate);
        const stored = structuredClone(input);
        if (validate && !validate(stored))
          return send(res, 400, { error: { type: 'invalid-input', message: invalidInput(validate) } });
        const run = makeRun(actId, input, stored, url.searchParams);
        runs.push(run);
        for (const w of runWaiters.splice(0)) w(run);
        if (fake.loseStartAnswers > 0) {
          fake.loseStartAnswers -= 1;
          log.status = -1;
          return req.socket.destroy();
        }
        return send(res, 201, { data: view(run) });
      }
      const listRoute = req.method === 'GET' ? /^\/v2\/(?:acts|actors)\/([^/]+)\/runs$/.exec(url.pathname) : null;
      if (listRoute) {
        const actId = decodeURIComponent(listRoute[1]!);
        if (!actors.has(actId)) return error(res, 404, 'Actor was not found');
        const q = url.searchParams;
        const after = q.get('startedAfter') ? new Date(q.get('startedAfter')!).getTime() : -Infinity;
        const before = q.get('startedBefore') ? new Date(q.get('startedBefore')!).getTime() : Infinity;
        const statuses = q.get('status')?.split(',');
        const desc = ['1', 'true'].includes(q.get('desc') ?? '');
        const offset = Number(q.get('offset') ?? 0);
        const limit = Math.min(1000, Number(q.get('limit') ?? 1000));
        const matching = runs
          .filter((r) => r.actId === actId && (!statuses || statuses.includes(r.status)))
          .filter((r) => r.startedAt.getTime() >= after && r.startedAt.getTime() <= before)
          .sort((a, b) => (a.startedAt.getTime() - b.startedAt.getTime()) * (desc ? -1 : 1));
        const items = matching.slice(offset, offset + limit).map(listView);
        return send(res, 200, { data: { total: matching.length, offset, limit, desc, count: items.length, items } });
      }
      const recordRoute =
        req.method === 'GET' ? /^\/v2\/key-value-stores\/([^/]+)-kvs\/records\/([^/]+)$/.exec(url.pathname) : null;
      if (recordRoute) {
        const run = runs.find((r) => r.id === recordRoute[1]);
        if (!run) return error(res, 404, 'Key-value store was not found');
        if (decodeURIComponent(recordRoute[2]!) !== 'INPUT') return error(res, 404, 'Record was not found');
        return send(res, 200, run.storedInput);
      }
      const runRoute = /^\/v2\/actor-runs\/([^/]+)(\/abort)?$/.exec(url.pathname);
      if (runRoute) {
        const run = runs.find((r) => r.id === runRoute[1]);
        if (!run || notYetKnown(run)) return error(res, 404, 'Actor run was not found');
        if (runRoute[2] && req.method === 'POST') {
          run.aborts += 1;
          abort(run);
          return send(res, 200, { data: view(run) });
        }
        if (req.method !== 'GET') return error(res, 400, 'Method not allowed');
        await waitForEnd(run, Number(url.searchParams.get('waitForFinish') ?? 0));
        return send(res, 200, { data: view(run) });
      }
      const itemsRoute = req.method === 'GET' ? /^\/v2\/datasets\/([^/]+)\/items$/.exec(url.pathname) : null;
      if (itemsRoute) {
        const run = runs.find((r) => r.defaultDatasetId === itemsRoute[1]);
        if (!run || notYetKnown(run)) return error(res, 404, 'Dataset was not found');
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
  const schemas = new Map<string, ValidateFunction | undefined>();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeApify = {
    url: `http://127.0.0.1:${port}`,
    token,
    runs,
    requests,
    actors,
    pricing: new Map(Object.entries(options.pricing ?? {})),
    notFoundAfterStart: 0,
    loseStartAnswers: 0,
    fail(path, status, times = 1, method) {
      faults.push({ path, status, times, ...(method ? { method } : {}) });
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
  return fake;
}
