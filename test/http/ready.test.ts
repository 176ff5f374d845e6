import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { gate, waitFor } from '../helpers/wait.ts';

/**
 * GET /ready (database reachable, migrations applied, the process's worker beating) apart from
 * GET /health (the process is alive): each check made to fail for real, then recovered.
 */

let gateway: TestApp;
let withWorker: TestApp;
let admin: postgres.Sql;

beforeAll(async () => {
  [gateway, withWorker] = await Promise.all([
    startTestApp({ worker: false }),
    startTestApp({ worker: true, config: { workerLivenessSecs: 1 } }),
  ]);
  admin = postgres(`${inject('pgServerUrl')}/postgres`, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await admin?.end();
  await Promise.all([gateway?.stop(), withWorker?.stop()]);
});

const ready = async (t: TestApp) => {
  const res = await fetch(`${t.url}/ready`);
  return { status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') };
};
const health = async (t: TestApp) => (await fetch(`${t.url}/health`)).status;

describe('GET /ready', () => {
  it('is ready when the database answers and is migrated; a gateway without a worker checks no worker', async () => {
    expect(await ready(gateway)).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: { database: 'ok', migrations: 'ok' } },
    });
    expect(Object.keys((await ready(gateway)).body.checks)).toEqual(['database', 'migrations']);
  });

  it("checks the heartbeat of the process's own worker", async () => {
    const answer = await waitFor(
      () => ready(withWorker),
      (r) => r.status === 200,
      { what: 'the worker to beat' },
    );
    expect(answer.body.checks).toEqual({ database: 'ok', migrations: 'ok', worker: 'ok' });
  });

  it('answers 503 naming the migrations while one is missing, and ready again once it is applied', async () => {
    const sql = gateway.app.core.sql;
    const [newest] =
      await sql`select id, hash, created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`;
    await sql`delete from drizzle.__drizzle_migrations where id = ${newest!.id}`;
    try {
      const answer = await ready(gateway);
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toBe('5');
      expect(answer.body.error).toMatchObject({
        code: 'not_ready',
        message: 'Not ready: migrations',
        details: [{ path: 'migrations', message: expect.stringMatching(/pending/) }],
      });
      expect(answer.body.checks).toMatchObject({ database: 'ok', migrations: expect.stringMatching(/pending/) });
      expect(await health(gateway)).toBe(200);
    } finally {
      await sql`insert into drizzle.__drizzle_migrations (id, hash, created_at) values (${newest!.id}, ${newest!.hash}, ${newest!.created_at})`;
    }
    expect((await ready(gateway)).status).toBe(200);
  });

  it('answers 503 naming the database while it refuses connections, /health staying 200, and recovers without a restart', async () => {
    const name = gateway.database.name;
    await admin.unsafe(`alter database ${name} with allow_connections false`);
    try {
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name}`;
      const answer = await waitFor(
        () => ready(gateway),
        (r) => r.status === 503,
        { what: '/ready to fail' },
      );
      expect(answer.body.error.details.map((d: { path: string }) => d.path)).toEqual(['database', 'migrations']);
      expect(answer.body.checks.database).toMatch(/^unreachable/);
      expect(await health(gateway)).toBe(200);
    } finally {
      await admin.unsafe(`alter database ${name} with allow_connections true`);
    }
    await waitFor(
      () => ready(gateway),
      (r) => r.status === 200,
      { what: '/ready to recover' },
    );
  });

  it('answers 503 naming the worker while its heartbeats cannot reach the database, and recovers', async () => {
    await waitFor(
      () => ready(withWorker),
      (r) => r.status === 200,
      { what: 'the worker to beat' },
    );
    // Heartbeats wait behind a lock on their table; WORKER_LIVENESS_SECS is 1.
    const blocker = postgres(withWorker.database.url, { max: 1, onnotice: () => {} });
    const release = gate();
    const locked = gate();
    const held = blocker.begin(async (tx) => {
      await tx`lock table worker_heartbeat in access exclusive mode`;
      locked.open();
      await release.promise;
    });
    try {
      await locked.promise;
      const answer = await waitFor(
        () => ready(withWorker),
        (r) => r.status === 503,
        { what: 'the missing heartbeat to show' },
      );
      expect(answer.body.checks).toMatchObject({
        database: 'ok',
        migrations: 'ok',
        worker: expect.stringMatching(/^no heartbeat for \d+ s \(WORKER_LIVENESS_SECS is 1\)$/),
      });
      expect(answer.body.error.details).toEqual([{ path: 'worker', message: answer.body.checks.worker }]);
    } finally {
      release.open();
      await held;
      await blocker.end();
    }
    await waitFor(
      () => ready(withWorker),
      (r) => r.status === 200,
      { what: 'the heartbeat to come back' },
    );
  });
});
