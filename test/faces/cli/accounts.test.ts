import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';
import { leadgate } from '../../helpers/process.ts';
import { graphql } from '../../helpers/gql/index.ts';

let t: TestApp;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  env = { DATABASE_URL: t.database.url, LOG_LEVEL: 'warn' };
});
afterAll(() => t?.stop());

const Viewer = graphql(`query CliAccountsViewer { viewer { id plan subscriptionStatus } }`);

describe('npx leadgate', () => {
  let accountId: string;
  let apiKey: string;

  it('accounts create --json prints the account id and a key that works', async () => {
    const out = await leadgate(
      [
        'accounts',
        'create',
        '--name',
        'Acme Growth',
        '--plan',
        'growth',
        '--status',
        'TRIAL',
        '--credits',
        '25.50',
        '--json',
      ],
      env,
    );
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    ({ accountId, apiKey } = JSON.parse(out.stdout));
    expect(accountId).toMatch(/^acc_/);
    expect(apiKey).toMatch(/^lg_live_[A-Za-z0-9]{32}$/);

    const [account] = await t.app.core.sql`select name, plan, subscription_status from account where id = ${accountId}`;
    expect(account).toEqual({ name: 'Acme Growth', plan: 'growth', subscription_status: 'TRIAL' });
    const [wallet] = await t.app.core.sql`select plan_micros::text from wallet where account_id = ${accountId}`;
    expect(wallet!.plan_micros).toBe('25500000');
    const res = await t.graphql(apiKey, Viewer);
    expect(res.body.data!.viewer).toEqual({ id: accountId, plan: 'GROWTH', subscriptionStatus: 'TRIAL' });
  });

  it('stores only a SHA-256 hash and a display prefix of the key', async () => {
    const rows = await t.app.core.sql`select prefix, hash from api_key where account_id = ${accountId}`;
    expect(rows).toHaveLength(1);
    const { createHash } = await import('node:crypto');
    expect(rows[0]).toEqual({ prefix: apiKey.slice(0, 14), hash: createHash('sha256').update(apiKey).digest('hex') });
    const dump = JSON.stringify(await t.app.core.sql`select * from api_key`);
    expect(dump).not.toContain(apiKey);
  });

  it('keys create adds a key; keys revoke PREFIX turns one off', async () => {
    const created = await leadgate(['keys', 'create', '--account', accountId, '--json'], env);
    expect(created.code).toBe(0);
    const second = JSON.parse(created.stdout).apiKey as string;
    expect((await t.request('GET', '/api/v1/runs/none', { key: second })).status).toBe(404);

    const revoked = await leadgate(['keys', 'revoke', second.slice(0, 14)], env);
    expect(revoked.code).toBe(0);
    expect((await t.request('GET', '/api/v1/runs/none', { key: second })).status).toBe(401);
    expect((await t.request('GET', '/api/v1/runs/none', { key: apiKey })).status).toBe(404);

    const again = await leadgate(['keys', 'revoke', second.slice(0, 14)], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/No active key with prefix/);
  });

  it('refuses bad arguments with a clear message and a failing exit code', async () => {
    const badPlan = await leadgate(['accounts', 'create', '--name', 'x', '--plan', 'platinum'], env);
    expect(badPlan.code).not.toBe(0);
    expect(badPlan.stderr).toMatch(/platinum.*(starter|choices)/s);
    const badCredits = await leadgate(['accounts', 'create', '--name', 'x', '--credits', 'lots'], env);
    expect(badCredits.code).not.toBe(0);
    expect(badCredits.stderr).toMatch(/dollar amount/);
    const unknownAccount = await leadgate(['keys', 'create', '--account', 'acc_nope'], env);
    expect(unknownAccount.code).toBe(1);
    expect(unknownAccount.stderr).toMatch(/Account not found/);
  });

  it('seed leaves a filled catalog alone', async () => {
    const before = (await t.app.core.sql`select count(*)::int as n from local_business`)[0]!.n;
    const out = await leadgate(['seed', '--scale', 'small'], env);
    expect(out.code).toBe(0);
    const report = JSON.parse(out.stdout);
    expect(report).toMatchObject({ scale: 'small', seed: 1 });
    expect(Object.values(report.inserted)).toEqual(Array(13).fill(0));
    expect(report.skipped).toHaveLength(13);
    expect((await t.app.core.sql`select count(*)::int as n from local_business`)[0]!.n).toBe(before);
  });

  it('an account made by the CLI can start a run', async () => {
    const res = await t.request('POST', '/api/v1/scrape/maps', { key: apiKey, body: DENVER_DENTISTS });
    expect(res.status).toBe(200);
    expect(res.body.runId).toEqual(expect.any(String));
  });
});
