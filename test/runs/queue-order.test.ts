import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../../src/runs/start.ts';
import { startWorker } from '../../workers/index.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * First waiting, first started: starts that arrive together are written in one transaction (the
 * account's write group), and still wait and start in the order they arrived.
 */

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
});
afterAll(() => t?.stop());

describe('the order of waiting runs', () => {
  it('promotes READY runs in the order their starts arrived, also when they were written together', async () => {
    const { accountId, apiKey } = await t.account();
    const principal = await t.app.core.auth.authenticate(`Bearer ${apiKey}`);
    const input = { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 3 };
    for (let i = 0; i < 10; i++)
      expect((await startRun(t.app.core, principal, 'maps', input)).run.status).toBe('RUNNING');

    // Called in this order in one tick: the first goes alone, the rest wait and share the next transaction.
    const burst = await Promise.all(Array.from({ length: 8 }, () => startRun(t.app.core, principal, 'maps', input)));
    expect(burst.map((s) => s.run.status)).toEqual(Array(8).fill('READY'));
    const arrived = burst.map((s) => s.run.id);

    const worker = await startWorker(t.app.core, { pollInterval: 100 });
    try {
      await waitFor(
        async () =>
          (
            await t.app.core
              .sql`select count(*)::int as n from run where account_id = ${accountId} and status <> 'SUCCEEDED'`
          )[0]!.n as number,
        (n) => n === 0,
        { timeoutMs: 60_000, what: 'every run succeeded' },
      );
    } finally {
      await worker.stop();
    }
    const started = await t.app.core
      .sql`select id from run where id in ${t.app.core.sql(arrived)} order by started_at, id`;
    expect(started.map((r) => r.id)).toEqual(arrived);
  });
});
