import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/shared/errors.ts';
import { executeRun } from '../../src/runs/engine/index.ts';
import { startRun } from '../../src/runs/start.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import type { Sources } from '../../src/sources/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let key: string;
let principal: Principal;

beforeAll(async () => {
  // No worker: the engine is driven by hand here.
  t = await startTestApp({ worker: false });
  const account = await t.account();
  key = account.apiKey;
  principal = await t.app.core.auth.authenticate(`Bearer ${key}`);
});
afterAll(() => t?.stop());

const INPUT = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 120 };

function failingSources(error: Error, afterPages = 0): Sources {
  let pages = 0;
  return {
    ...t.app.core.sources,
    localBusinesses: {
      ...t.app.core.sources.localBusinesses,
      searchPlaces: async (query) => {
        if (pages++ >= afterPages) throw error;
        return t.app.core.sources.localBusinesses.searchPlaces(query);
      },
    },
  };
}

const items = async (runId: string) =>
  (await t.app.core.sql`select seq from run_item where run_id = ${runId} order by seq`).map((r) => r.seq as number);

describe('executeRun', () => {
  it('ends FAILED with a safe message when the runner throws, keeping rows already produced', async () => {
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    const secret = new Error('connect ECONNREFUSED 10.0.0.7:5432 password=hunter2');
    await executeRun({ ...t.app.core, sources: failingSources(secret, 1) }, run.id);
    const status = await t.request('GET', `/api/v1/scrape/status/${run.id}`, { key });
    // An error of the run's own is no stop reason: the run is not complete, and statusMessage says why.
    expect(status.body).toMatchObject({
      status: 'FAILED',
      statusMessage: 'The run failed because of an internal error. Results produced so far were kept.',
      complete: false,
      stoppedReason: null,
      handled: 50,
      outputUrl: `${t.url}/api/downloads/${run.id}`,
    });
    expect(status.text).not.toContain('hunter2');
    const [row] = await t.app.core.sql`select error_detail from run where id = ${run.id}`;
    expect(row!.error_detail).toContain('ECONNREFUSED');
    const csv = await t.request('GET', `/api/downloads/${run.id}`, { key });
    expect(csv.text.trim().split('\n')).toHaveLength(51);
  });

  it('shows the message of an expected error as it is', async () => {
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    await executeRun(
      {
        ...t.app.core,
        sources: failingSources(
          new AppError(502, 'upstream_failed', 'The listing source is unavailable; try again later.'),
        ),
      },
      run.id,
    );
    const status = await t.request('GET', `/api/v1/scrape/status/${run.id}`, { key });
    expect(status.body).toMatchObject({
      status: 'FAILED',
      statusMessage: 'The listing source is unavailable; try again later.',
      handled: 0,
    });
  });

  it('a second attempt after a crash stores only the missing rows, once', async () => {
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    // An earlier attempt died after its first page was stored.
    await executeRun({ ...t.app.core, sources: failingSources(new Error('killed'), 1) }, run.id);
    await t.app.core.sql`update run set status = 'RUNNING', finished_at = null, expires_at = null where id = ${run.id}`;
    await executeRun(t.app.core, run.id);
    const seqs = await items(run.id);
    const expected = (
      await t.app.core.sql`select count(*)::int as n from local_business where category = 'Dentist'`
    )[0]!.n as number;
    expect(seqs).toEqual(Array.from({ length: Math.min(120, expected) }, (_, i) => i));
    // Running a finished run again changes nothing.
    await executeRun(t.app.core, run.id);
    expect(await items(run.id)).toHaveLength(seqs.length);
    const status = await t.request('GET', `/api/v1/scrape/status/${run.id}`, { key });
    expect(status.body.status).toBe('SUCCEEDED');
  });

  it('a run of an unknown id is ignored', async () => {
    await expect(executeRun(t.app.core, 'doesNotExist12345')).resolves.toBeUndefined();
  });
});

describe('downloads before the end and after expiry', () => {
  it('409 run_not_finished while the run is RUNNING', async () => {
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    const res = await t.request('GET', `/api/downloads/${run.id}`, { key });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('run_not_finished');
  });

  it('410 results_expired after the retention period', async () => {
    const { run } = await startRun(t.app.core, principal, 'maps', { ...INPUT, maxCrawledPlacesPerSearch: 2 });
    await executeRun(t.app.core, run.id);
    await t.app.core.sql`update run set expires_at = now() - interval '1 minute' where id = ${run.id}`;
    const res = await t.request('GET', `/api/downloads/${run.id}`, { key });
    expect(res.status).toBe(410);
    expect(res.body.error.code).toBe('results_expired');
  });
});
