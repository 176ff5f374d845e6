import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFile } from '../../db/import/index.ts';
import { tokenDigest } from '../../src/config/operator.ts';
import { accessRequest, erasePerson, type PrivacyReceipt } from '../../src/privacy/erasure.ts';
import { importSuppression } from '../../src/privacy/imports.ts';
import { getTool } from '../../src/tools/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startFakeApify, type FakeApify } from '../helpers/fake-apify.ts';

/**
 * An operator's erasure (GDPR art. 17) and access request (art. 15), from the service and the operator
 * API: the person's catalog records, stored run rows, deliveries and dataset identities go, their
 * identifiers are suppressed for good (the deployment's list and every account that held them), the
 * receipt names no one, and afterwards no search, enrichment, tool run, upstream run or import brings
 * them back. An identifier other people share removes none of theirs.
 */

interface Person {
  id: number;
  first_name: string;
  last_name: string;
  email: string;
  phone: string;
  linkedin_url: string;
  state: string;
}

const TOKEN = 'operator-token-for-tests-0123456789abcdef';
const LEADS = 'code_crafter~leads-finder';

let t: TestApp;
let fake: FakeApify;
let dir: string;
let key: string;
let accountId: string;
let otherAccount: string;
let otherKey: string;
let p: Person;
let colleague: Person;
let erased: PrivacyReceipt;
let firstAccess: Awaited<ReturnType<typeof accessRequest>>;

const operator = (method: string, url: string, body?: unknown, token = TOKEN) =>
  t.request(method, url, { body, headers: token ? { authorization: `Bearer ${token}` } : {} });

const person = (where: string) =>
  t.app.core.sql.unsafe<Person[]>(
    `select id::int, first_name, last_name, email, coalesce(phone, mobile) as phone, linkedin_url, state
     from person ${where} order by id limit 1`,
  );

const enrich = async (k: string, email: string) =>
  (
    (await t.request('POST', '/api/v1/enrich', { key: k, body: { rows: [{ email }] } })).body as {
      rows: { match_status: string }[];
    }
  ).rows[0]?.match_status;

const searchBySocial = async (k: string, url: string) =>
  (
    (await t.request('GET', `/api/v1/database/leads?socialUrl=${encodeURIComponent(url)}`, { key: k })).body as {
      leads: { email?: string | null }[];
    }
  ).leads;

const findPeople = (k: string, who: Person) =>
  t.runTool(k, '/api/v1/scrape/people-finder', {
    name: `${who.first_name} ${who.last_name}`,
    state: who.state,
    datasetName: 'people',
  });

beforeAll(async () => {
  fake = await startFakeApify({ actors: [LEADS] });
  t = await startTestApp({
    config: {
      apify: { token: fake.token, baseUrl: fake.url },
      toolSources: { 'lead-scraper': { engine: 'apify', actorId: LEADS } },
      operatorTokenSha256: tokenDigest(TOKEN),
    },
  });
  ({ apiKey: key, accountId } = await t.account({ creditsMicros: 50_000_000n }));
  ({ apiKey: otherKey, accountId: otherAccount } = await t.account({ creditsMicros: 50_000_000n }));
  dir = await mkdtemp(path.join(tmpdir(), 'erasure-'));
  const us = `where email is not null and linkedin_url is not null and country = 'United States' and state is not null`;
  p = (await person(`${us} and phone is not null`))[0]!;
  colleague = (await person(`${us} and id <> ${p.id} and last_name <> '${p.last_name.replace(/'/g, "''")}'`))[0]!;
  const sql = t.app.core.sql;
  // The same person as a property's owner and a rental host; a colleague on the same office number.
  await sql`update property set owner_emails = ${[p.email.toUpperCase()]}
    where id = (select min(id) from property where owner_name is not null)`;
  await sql`update rental_host set email = ${p.email} where id = (select min(id) from rental_host)`;
  await sql`update person set phone = ${p.phone} where id = ${colleague.id}`;
});
afterAll(async () => {
  await t?.stop();
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('before the erasure', () => {
  it('the tools whose dataset identity is a catalog id are keyed as the erasure reads them (src/privacy/held.ts)', () => {
    expect(getTool('lead-scraper').identity).toEqual(['id']);
    expect(getTool('people-finder').identity).toEqual(['person_id']);
  });

  it('the person is delivered: a lead search, a run kept in a dataset, another account’s dataset', async () => {
    expect((await searchBySocial(key, p.linkedin_url)).map((l) => l.email)).toEqual([p.email]);
    const found = await findPeople(key, p);
    expect(JSON.stringify(found.rows)).toContain(p.email);
    // Another account's email validations, kept as a dataset whose rows have expired: the identity alone.
    await t.app.core.sql`insert into account_dataset (id, account_id, name, tool)
      values ('ds_erasure_test', ${otherAccount}, 'checked', 'email-validator')`;
    await t.app.core.sql`insert into dataset_item (account_id, dataset, key, run_id, seq)
      values (${otherAccount}, 'checked', ${p.email.toLowerCase()}, 'gone', 0)`;
  });

  it('an access request answers everything held, with a receipt naming no one', async () => {
    firstAccess = await accessRequest(t.app.core.db, {
      identifiers: [{ kind: 'email', value: ` ${p.email.toUpperCase()} ` }],
      requestedBy: 'operator',
      note: 'ticket 1',
    });
    const data = firstAccess.data as Record<string, unknown> & {
      catalog: { people: { id: number; email: string }[]; propertyOwners: unknown[]; rentalHosts: unknown[] };
      runRows: { tool: string; accountId: string; row: unknown }[];
      deliveredLeads: { accountId: string }[];
      datasetIdentities: { accountId: string; tool: string; key: string }[];
    };
    expect(data.catalog.people.map((r) => [r.id, r.email])).toEqual([[p.id, p.email]]);
    expect(data.catalog.propertyOwners).toHaveLength(1);
    expect(data.catalog.rentalHosts).toHaveLength(1);
    expect(data.runRows.map((r) => [r.tool, r.accountId])).toEqual([['people-finder', accountId]]);
    expect(data.deliveredLeads.map((d) => d.accountId)).toEqual([accountId]);
    expect(data.datasetIdentities.map((i) => [i.accountId, i.tool, i.key]).sort()).toEqual(
      [
        [accountId, 'people-finder', `lead-${p.id}`],
        [otherAccount, 'email-validator', p.email.toLowerCase()],
      ].sort(),
    );
    expect(firstAccess.receipt).toMatchObject({
      kind: 'access',
      source: null,
      requestedBy: 'operator',
      counts: { people: 1, propertyOwners: 1, rentalHosts: 1, runRows: 1, deliveredLeads: 1, datasetIdentities: 2 },
    });
    expect(firstAccess.receipt.counts.accounts).toBe(2);
    const stored = JSON.stringify(await t.app.core.sql`select * from privacy_request`);
    expect(stored.toLowerCase()).not.toContain(p.email.toLowerCase());
  });
});

describe('an erasure', () => {
  it('refuses an identifier that is none, before anything is done', async () => {
    const refused = erasePerson(t.app.core.db, {
      identifiers: [
        { kind: 'email', value: p.email },
        { kind: 'phone', value: 'call me' },
      ],
      source: 'erasure',
      requestedBy: 'operator',
    });
    await expect(refused).rejects.toMatchObject({
      code: 'validation_failed',
      details: [{ path: 'identifiers.1.value', message: expect.stringContaining('phone number') }],
    });
    expect(await person(`where id = ${p.id}`)).toHaveLength(1);
  });

  it('removes the person’s records and keeps them out, leaving what a shared number names of others', async () => {
    erased = await erasePerson(t.app.core.db, {
      identifiers: [
        { kind: 'email', value: p.email.toUpperCase() },
        { kind: 'phone', value: p.phone },
      ],
      source: 'erasure',
      requestedBy: 'operator',
      note: 'ticket 2',
    });
    expect(erased).toMatchObject({ kind: 'erasure', source: 'erasure', requestedBy: 'operator', note: 'ticket 2' });
    expect(erased.counts).toMatchObject({
      people: 1,
      propertyOwners: 1,
      rentalHosts: 1,
      runRows: 1,
      runs: 1,
      deliveredLeads: 1,
      datasetIdentities: 2,
      accounts: 2,
    });
    // The colleague only shares the number: kept, counted, and not removed.
    expect(erased.counts.shared).toBeGreaterThanOrEqual(1);
    expect(await person(`where id = ${colleague.id}`)).toHaveLength(1);

    const sql = t.app.core.sql;
    expect(await person(`where id = ${p.id}`)).toEqual([]);
    const [owner] =
      await sql`select count(*)::int as n from property where ${p.email.toUpperCase()} = any(owner_emails)`;
    expect(owner?.n).toBe(0);
    const [host] = await sql`select count(*)::int as n from rental_host where lower(email) = ${p.email.toLowerCase()}`;
    expect(host?.n).toBe(0);
    const [delivered] = await sql`select count(*)::int as n from delivered_lead where person_id = ${p.id}`;
    expect(delivered?.n).toBe(0);
    const identities =
      await sql`select key from dataset_item where key in (${`lead-${p.id}`}, ${p.email.toLowerCase()})`;
    expect(identities).toEqual([]);
    const stored =
      await sql`select data from run_item i join run r on r.id = i.run_id where r.account_id = ${accountId}`;
    expect(JSON.stringify(stored).toLowerCase()).not.toContain(p.email.toLowerCase());

    // Suppressed for good: the deployment's list and each account that held them, as hashes.
    const lists = await sql`select account_id, kind, source from suppression where source = 'erasure'`;
    const sorted = (pairs: unknown[][]) => pairs.map((pair) => JSON.stringify(pair)).sort();
    expect(sorted(lists.map((l) => [l.account_id, l.kind]))).toEqual(
      sorted(
        [accountId, otherAccount, null].flatMap((a) => [
          [a, 'hash'],
          [a, 'hash'],
        ]),
      ),
    );
    expect(erased.counts.suppressions).toBe(6);
    const all = JSON.stringify(await sql`select * from suppression where source = 'erasure'`).toLowerCase();
    expect(all).not.toContain(p.email.toLowerCase());
    // The account sees them on its list, and cannot take them off.
    const listed = await t.request('GET', '/api/v1/suppressions', { key });
    const entry = listed.body.entries.find((e: { source: string }) => e.source === 'erasure');
    expect(entry).toMatchObject({ kind: 'hash', note: `Erasure ${erased.id}` });
    expect((await t.request('DELETE', `/api/v1/suppressions/${entry.id}`, { key })).status).toBe(409);

    // The receipt and the audit log name no one.
    const receipts = JSON.stringify(await sql`select * from privacy_request`).toLowerCase();
    expect(receipts).not.toContain(p.email.toLowerCase());
    expect(receipts).not.toContain(p.phone.replace(/\D/g, '').slice(-7));
    const events = await sql`select action, target_id, details from audit_event where action = 'privacy.erasure'`;
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ target_id: erased.id, details: { catalogRows: 3, runRows: 1 } });
    expect(JSON.stringify(events).toLowerCase()).not.toContain(p.email.toLowerCase());
  });

  it('and afterwards no search, enrichment, run, upstream run or import brings the person back', async () => {
    expect(await searchBySocial(key, p.linkedin_url)).toEqual([]);
    expect(await enrich(otherKey, p.email)).toBe('not_found');
    const again = await findPeople(otherKey, p);
    expect(JSON.stringify(again.rows).toLowerCase()).not.toContain(p.email.toLowerCase());

    // An upstream run that returns them, in another spelling of their address.
    const next = fake.nextRun();
    const started = await t.request('POST', '/api/v1/scrape/leadplatform', {
      key,
      body: { url: 'https://app.apollo.io/#/people?personTitles[]=cfo', count: 500 },
    });
    expect(started.status, started.text).toBe(200);
    const upstream = await next;
    const lead = (first: string, email: string) => ({ first_name: first, last_name: 'Doe', email, job_title: 'CFO' });
    upstream.push(lead(p.first_name, ` ${p.email.toUpperCase()}`), lead('Free', 'free.doe@erasure.example'));
    upstream.set('SUCCEEDED');
    expect(await t.waitForRun(key, started.body.runId)).toMatchObject({ status: 'SUCCEEDED', suppressed: 1 });
    const rows = await t.request('GET', `/api/downloads/${started.body.runId}?format=json`, { key });
    expect(rows.body.map((r: { email: string }) => r.email)).toEqual(['free.doe@erasure.example']);

    // A later catalog import that brings them back leaves them out.
    const csv = path.join(dir, 'people.csv');
    await writeFile(
      csv,
      ['first_name,last_name,email', `${p.first_name},${p.last_name},${p.email}`, 'Kept,Person,kept@erasure.test'].join(
        '\n',
      ),
    );
    const imported = await importFile(t.app.core.sql, { dataset: 'people', file: csv, suppressed: importSuppression });
    expect(imported.summary).toMatchObject({ rows: 2, inserted: 1, suppressed: 1 });
    expect(await person(`where lower(email) = '${p.email.toLowerCase()}'`)).toEqual([]);
  });

  it('a second erasure finds nothing more; an access request then answers the suppression and the receipts', async () => {
    const twice = await erasePerson(t.app.core.db, {
      identifiers: [{ kind: 'email', value: p.email }],
      source: 'erasure',
      requestedBy: 'operator',
    });
    expect(twice.counts).toMatchObject({ people: 0, runRows: 0, datasetIdentities: 0, accounts: 0, suppressions: 0 });
    const after = await accessRequest(t.app.core.db, {
      identifiers: [{ kind: 'email', value: p.email }],
      requestedBy: 'operator',
    });
    const data = after.data as {
      catalog: { people: unknown[] };
      suppressions: { accountId: string | null; source: string }[];
      earlierRequests: { id: string }[];
    };
    expect(data.catalog.people).toEqual([]);
    expect(data.suppressions.filter((s) => s.accountId === null).map((s) => s.source)).toEqual(['erasure']);
    expect(data.earlierRequests.map((r) => r.id)).toEqual([firstAccess.receipt.id, erased.id, twice.id]);
  });
});

describe('the operator API', () => {
  const ERASURES = '/operator/v1/privacy/erasures';

  it('refuses a request without the operator token, with a wrong one, or with an API key', async () => {
    for (const token of ['', 'not-the-operator-token-0123456789abcdef', key]) {
      const res = await operator('POST', ERASURES, { identifiers: [{ kind: 'email', value: colleague.email }] }, token);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthenticated');
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="operator"');
    }
    expect(await person(`where id = ${colleague.id}`)).toHaveLength(1);
  });

  it('answers 404 on every route while no token is configured', async () => {
    const config = t.app.core.config;
    const configured = config.operatorTokenSha256;
    config.operatorTokenSha256 = undefined;
    try {
      const res = await operator('GET', '/operator/v1/privacy/receipts');
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    } finally {
      config.operatorTokenSha256 = configured;
    }
  });

  it('erases, answers access requests and lists receipts with the token', async () => {
    const bad = await operator('POST', ERASURES, { identifiers: [{ kind: 'email', value: 'nobody' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ path: 'identifiers.0.value', message: 'must be an e-mail address' }]);

    const access = await operator('POST', '/operator/v1/privacy/access-requests', {
      identifiers: [{ kind: 'email', value: colleague.email }],
    });
    expect(access.status, access.text).toBe(201);
    expect(access.headers.get('cache-control')).toBe('no-store');
    expect(access.body.data.catalog.people[0].email).toBe(colleague.email);
    expect(access.body.receipt).toMatchObject({ kind: 'access', requestedBy: 'operator API' });

    const done = await operator('POST', ERASURES, {
      identifiers: [{ kind: 'email', value: colleague.email }],
      note: 'ticket 3',
      requestedBy: 'privacy desk',
    });
    expect(done.status, done.text).toBe(201);
    expect(done.body).toMatchObject({ kind: 'erasure', requestedBy: 'privacy desk', counts: { people: 1 } });
    expect(done.headers.get('location')).toBe(`/operator/v1/privacy/receipts/${done.body.id}`);
    expect(done.headers.get('ratelimit-policy')).toMatch(/;w=60$/);
    expect(await person(`where id = ${colleague.id}`)).toEqual([]);

    const one = await operator('GET', done.headers.get('location') as string);
    expect(one.body).toEqual(done.body);
    const page = await operator('GET', '/operator/v1/privacy/receipts?limit=2');
    expect(page.body.receipts.map((r: { id: string }) => r.id)).toEqual([done.body.id, access.body.receipt.id]);
    const next = await operator('GET', `/operator/v1/privacy/receipts?limit=2&before=${page.body.nextBefore}`);
    expect(next.body.receipts).toHaveLength(2);
    expect((await operator('GET', '/operator/v1/privacy/receipts/prq_none')).status).toBe(404);
    expect((await operator('GET', '/operator/v1/privacy/receipts?limt=2')).status).toBe(400);
    expect((await operator('GET', '/operator/v1/privacy/receipts?before=prq_none')).status).toBe(400);
  });
});
