import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpiredEnrichmentJobs } from '../../src/endpoints/enrichment-jobs.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * GraphQL enrichment of a file (src/endpoints/enrichment.ts, enrichment-jobs.ts): rows with nothing usable
 * to match on are skipped and named by their place with reasons in plain words, never counted; people are
 * matched by full name at a company; a `fileName` records the job in the account's history, whose rows
 * are read again (the do-not-contact list applied again) until they expire. REST keeps the spec's rule.
 */

let t: TestApp;
let key: string;
let accountId: string;
let other: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key, accountId } = await t.account({ plan: 'scale' }));
  ({ apiKey: other } = await t.account({ plan: 'scale' }));
});
afterAll(() => t?.stop());

const ENRICH = `mutation($rows: [LeadEnrichmentInput!]!, $preview: Boolean, $fileName: String) {
  enrichLeads(rows: $rows, preview: $preview, fileName: $fileName) {
    rows { matchStatus matchedBy lead { fullName email companyDomain } }
    skipped { row reasons }
    summary { total matched notFound skipped }
    job { id fileName total matched notFound skipped rowsAvailable }
    userErrors { code field message }
  }
}`;
const JOB = `query($id: ID!) {
  enrichmentJob(id: $id) {
    id fileName kind total matched skipped rowsAvailable
    leadRows { matchStatus matchedBy lead { fullName email } }
    skippedRows { row reasons }
  }
}`;
const used = async () =>
  (
    await t.app.core.sql`select coalesce(sum(used), 0)::int as n from daily_usage
        where account_id = ${accountId} and kind = 'enrichment'`
  )[0]!.n as number;
const person = async (where: string) =>
  (
    await t.app.core.sql.unsafe(
      `select p.*, c.domain, c.name as company from person p join company c on c.id = p.company_id
       where ${where} order by p.id limit 1`,
    )
  )[0]!;

describe('enrichLeads with rows it cannot use', () => {
  let jobId: string;
  let a: Record<string, string>;
  /** The leads the enrichment answered, as the job's rows should give them again. */
  let leads: ({ fullName: string; email: string | null } | null)[];

  it('enriches the rest, names each skipped row with its reasons, counts only matches, records the job', async () => {
    a = await person('p.email is not null');
    const b = await person(`p.id > ${a.id} and p.seniority = 'entry' and p.email is not null`);
    const c = await person(`p.id > ${b.id} and p.company_id <> ${b.company_id}`);
    const before = await used();
    const res = await t.graphql(key, ENRICH, {
      fileName: 'people.csv',
      rows: [
        { email: a.email },
        { companyName: 'Acme' },
        { email: 'not-an-email', mobile: '12 34' },
        { fullName: `${b.first_name} ${b.last_name}`, domain: b.domain },
        { firstName: c.first_name.toUpperCase(), lastName: c.last_name, companyName: c.company.toLowerCase() },
        { email: 'nobody@nowhere.invalid' },
      ],
    });
    const answer = res.body.data.enrichLeads;
    expect(answer.userErrors).toEqual([]);
    expect(
      answer.rows.map((r: { matchStatus: string; matchedBy: string | null }) => [r.matchStatus, r.matchedBy]),
    ).toEqual([
      ['MATCHED', 'EMAIL'],
      ['SKIPPED', null],
      ['SKIPPED', null],
      ['MATCHED', 'NAME'],
      ['MATCHED', 'NAME'],
      ['NOT_FOUND', null],
    ]);
    // The named person, not the company's most senior one.
    expect(answer.rows[3].lead).toMatchObject({ fullName: `${b.first_name} ${b.last_name}`, companyDomain: b.domain });
    expect(answer.rows[4].lead).toMatchObject({ fullName: `${c.first_name} ${c.last_name}`, companyDomain: c.domain });
    expect(answer.skipped).toEqual([
      { row: 2, reasons: ['no email, LinkedIn URL, mobile, company domain, or name and company to match on'] },
      {
        row: 3,
        reasons: [
          'the email “not-an-email” is not an email address',
          'the mobile number “12 34” has fewer than 10 digits',
          'no email, LinkedIn URL, mobile, company domain, or name and company to match on',
        ],
      },
    ]);
    expect(answer.summary).toEqual({ total: 6, matched: 3, notFound: 1, skipped: 2 });
    // Only the three matches count against the daily allowance.
    expect((await used()) - before).toBe(3);
    expect(answer.job).toMatchObject({
      fileName: 'people.csv',
      total: 6,
      matched: 3,
      notFound: 1,
      skipped: 2,
      rowsAvailable: true,
    });
    jobId = answer.job.id;
    leads = answer.rows.map((r: { lead: { fullName: string; email: string | null } | null }) =>
      r.lead ? { fullName: r.lead.fullName, email: r.lead.email } : null,
    );
    expect(jobId).toMatch(/^enj_/);
  });

  it('refuses a file name Postgres cannot store at its field, before anything is counted', async () => {
    const before = await used();
    const answer = (await t.graphql(key, ENRICH, { rows: [{ email: a.email }], fileName: 'a\u0000b.csv' })).body;
    expect(answer.errors).toBeUndefined();
    expect(answer.data.enrichLeads.userErrors).toEqual([
      expect.objectContaining({ code: 'VALIDATION_FAILED', field: ['fileName'] }),
    ]);
    expect(await used()).toBe(before);
  });

  it('counts nothing and records no job for a preview or a request without a file name', async () => {
    const before = await used();
    const preview = await t.graphql(key, ENRICH, { fileName: 'x.csv', preview: true, rows: [{ email: a.email }, {}] });
    expect(preview.body.data.enrichLeads).toMatchObject({ job: null, summary: { matched: 1, skipped: 1 } });
    expect(await used()).toBe(before);
    const unnamed = await t.graphql(key, ENRICH, { rows: [{ email: a.email }] });
    expect(unnamed.body.data.enrichLeads.job).toBeNull();
    const jobs = await t.graphql(key, '{ enrichmentJobs { totalCount nodes { id } } }');
    expect(jobs.body.data.enrichmentJobs).toEqual({ totalCount: 1, nodes: [{ id: jobId }] });
  });

  it('keeps REST as the spec has it: a row with nothing to match on refuses the request', async () => {
    const before = await used();
    const res = await t.request('POST', '/api/v1/enrich', { key, body: { rows: [{ email: a.email }, { note: 'x' }] } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { path: 'rows.1', message: 'needs at least one of email, social, mobile, domain' },
    ]);
    expect(await used()).toBe(before);
  });

  it('lists the job in the history and reads its rows again, for its account only', async () => {
    const job = await t.graphql(key, JOB, { id: jobId });
    const read = job.body.data.enrichmentJob;
    expect(read).toMatchObject({ id: jobId, fileName: 'people.csv', kind: 'LEADS', total: 6, rowsAvailable: true });
    expect(read.leadRows.map((r: { matchStatus: string }) => r.matchStatus)).toEqual([
      'MATCHED',
      'SKIPPED',
      'SKIPPED',
      'MATCHED',
      'MATCHED',
      'NOT_FOUND',
    ]);
    expect(read.leadRows[0].lead.email).toBe(a.email);
    expect(read.leadRows.map((r: { lead: unknown }) => r.lead)).toEqual(leads);
    expect(read.skippedRows.map((s: { row: number }) => s.row)).toEqual([2, 3]);

    // Another account's id: nothing, whichever way it is asked for.
    expect((await t.graphql(other, JOB, { id: jobId })).body.data.enrichmentJob).toBeNull();
    const node = await t.graphql(other, `query($id: ID!) { node(id: $id) { id } }`, { id: jobId });
    expect(node.body.data.node).toBeNull();
    const page = await t.graphql(other, `query($after: String) { enrichmentJobs(after: $after) { totalCount } }`, {
      after: jobId,
    });
    expect(page.body.errors[0].extensions.code).toBe('VALIDATION_FAILED');
    expect((await t.graphql(other, '{ enrichmentJobs { totalCount } }')).body.data.enrichmentJobs.totalCount).toBe(0);
  });

  it('leaves out a person put on the do-not-contact list after the job', async () => {
    const added = await t.graphql(
      key,
      `mutation($input: AddToDoNotContactInput!) { addToDoNotContact(input: $input) { added userErrors { code } } }`,
      { input: { entries: [{ kind: 'EMAIL', value: a.email }] } },
    );
    expect(added.body.data.addToDoNotContact).toEqual({ added: 1, userErrors: [] });
    const read = (await t.graphql(key, JOB, { id: jobId })).body.data.enrichmentJob;
    expect(read.leadRows[0]).toEqual({ matchStatus: 'NOT_FOUND', matchedBy: null, lead: null });
    expect(JSON.stringify(read)).not.toContain(a.email);
  });

  it('keeps the counts but not the rows once they expire, with the run retention', async () => {
    const later = new Date(Date.now() + (t.app.core.config.resultRetentionHours + 1) * 3_600_000);
    expect(await purgeExpiredEnrichmentJobs(t.app.core.db, later)).toBe(1);
    const read = (await t.graphql(key, JOB, { id: jobId })).body.data.enrichmentJob;
    expect(read).toMatchObject({
      total: 6,
      matched: 3,
      skipped: 2,
      rowsAvailable: false,
      leadRows: null,
      skippedRows: null,
    });
    const [stored] = await t.app.core.sql`select rows from enrichment_job where id = ${jobId}`;
    expect(stored!.rows).toBeNull();
  });
});

describe('enrichLocalBusinesses with rows it cannot use', () => {
  it('skips a row without a usable key and says why, and records a local-business job', async () => {
    const [place] = await t.app.core.sql`select phone from local_business where phone is not null order by id limit 1`;
    const res = await t.graphql(
      key,
      `mutation($rows: [LocalBusinessEnrichmentInput!]!) {
        enrichLocalBusinesses(rows: $rows, fileName: "shops.csv") {
          rows { matchStatus } skipped { row reasons } summary { total matched skipped } job { id } userErrors { code }
        }
      }`,
      { rows: [{ phone: place!.phone }, { name: 'Smile Dental' }, { phone: '12' }] },
    );
    const answer = res.body.data.enrichLocalBusinesses;
    expect(answer.rows.map((r: { matchStatus: string }) => r.matchStatus)).toEqual(['MATCHED', 'SKIPPED', 'SKIPPED']);
    expect(answer.skipped).toEqual([
      {
        row: 2,
        reasons: [
          'a business name needs a city or postal code beside it',
          'no phone, business name with city or postal code, or website to match on',
        ],
      },
      {
        row: 3,
        reasons: [
          'the phone “12” is not a phone number',
          'no phone, business name with city or postal code, or website to match on',
        ],
      },
    ]);
    expect(answer.summary).toEqual({ total: 3, matched: 1, skipped: 2 });
    const job = await t.graphql(
      key,
      `query($id: ID!) { enrichmentJob(id: $id) { kind businessRows { matchStatus } } }`,
      {
        id: answer.job.id,
      },
    );
    expect(job.body.data.enrichmentJob).toEqual({
      kind: 'LOCAL_BUSINESSES',
      businessRows: [{ matchStatus: 'MATCHED' }, { matchStatus: 'SKIPPED' }, { matchStatus: 'SKIPPED' }],
    });
  });
});

describe('an access request', () => {
  it('reads out the jobs whose kept rows name the person, with those rows only, and counts them', async () => {
    // The newest people with an e-mail: none of the earlier tests' (those take the oldest, and one is put
    // on the account's do-not-contact list), none the erasure below takes.
    const newest = (where: string) => person(`p.id = (select max(id) from person where ${where})`);
    const named = await newest('email is not null and mobile is not null');
    const other = await newest(`email is not null and id <> ${named.id}`);
    const rows = [{ email: other.email }, { email: String(named.email).toUpperCase() }];
    const answer = (await t.graphql(key, ENRICH, { rows, fileName: 'access.csv' })).body.data.enrichLeads;
    expect(answer.userErrors).toEqual([]);

    const { accessRequest } = await import('../../src/privacy/erasure.ts');
    const { receipt, data } = await accessRequest(t.app.core.db, {
      identifiers: [{ kind: 'email', value: named.email }],
      requestedBy: 'test',
    });
    const jobs = (data as { enrichmentJobs: { id: string; rows: { row: number; entry: unknown }[] }[] }).enrichmentJobs;
    const job = jobs.find((j) => j.id === answer.job.id);
    expect(job).toMatchObject({ accountId, fileName: 'access.csv', rows: [{ row: 2 }] });
    // The row as sent and as answered; the other person's row stays out of the answer.
    expect(job!.rows[0]!.entry).toMatchObject({ input: rows[1], status: 'matched' });
    expect(JSON.stringify(jobs)).not.toContain(String(other.email));
    expect(receipt.counts.enrichmentJobs).toBe(jobs.length);
    expect((data as { accounts: string[] }).accounts).toContain(accountId);
    // It changes nothing: the job keeps its rows.
    const [kept] = await t.app.core
      .sql`select rows is not null as kept from enrichment_job where id = ${answer.job.id}`;
    expect(kept!.kept).toBe(true);
  });
});

describe('an erasure', () => {
  it('deletes the kept rows of the jobs that name the person, by e-mail or by phone, and no others', async () => {
    const byEmail = await person('p.email is not null and p.mobile is null');
    const byMobile = await person(`p.mobile is not null and p.email is not null and p.id <> ${byEmail.id}`);
    const bystander = await person(`p.email is not null and p.id not in (${byEmail.id}, ${byMobile.id})`);
    const job = async (fileName: string, rows: Record<string, string>[]) => {
      const answer = (await t.graphql(key, ENRICH, { rows, fileName })).body.data.enrichLeads;
      expect(answer.userErrors).toEqual([]);
      return answer.job.id as string;
    };
    const named = await job('named.csv', [{ email: String(byEmail.email).toUpperCase() }]);
    const phoned = await job('phoned.csv', [{ mobile: byMobile.mobile }]);
    const kept = await job('kept.csv', [{ email: bystander.email }]);

    const { erasePerson } = await import('../../src/privacy/erasure.ts');
    const first = await erasePerson(t.app.core.db, {
      identifiers: [{ kind: 'email', value: byEmail.email }],
      source: 'erasure',
      requestedBy: 'test',
    });
    expect(first.counts.enrichmentJobs).toBe(1);
    // The account the job delivered the person to keeps them out on its own list, as a DROP hash.
    const entries = await t.app.core
      .sql`select kind from suppression where account_id = ${accountId} and source = 'erasure'`;
    expect(entries.map((k) => k.kind)).toEqual(['hash']);
    // The mobile as the person would give it: another way of writing the same number.
    const national = String(byMobile.mobile).replace(/\D/g, '').slice(-10);
    const second = await erasePerson(t.app.core.db, {
      identifiers: [{ kind: 'phone', value: `(${national.slice(0, 3)}) ${national.slice(3, 6)}-${national.slice(6)}` }],
      source: 'erasure',
      requestedBy: 'test',
    });
    expect(second.counts.enrichmentJobs).toBe(1);

    const stored = await t.app.core.sql<{ id: string; rows: unknown; purged: boolean }[]>`
      select id, rows, purged_at is not null as purged from enrichment_job where id = any(${[named, phoned, kept]})`;
    const of = (id: string) => stored.find((s) => s.id === id)!;
    expect(of(named)).toMatchObject({ rows: null, purged: true });
    expect(of(phoned)).toMatchObject({ rows: null, purged: true });
    expect(of(kept).purged).toBe(false);
    expect(JSON.stringify(of(kept).rows)).toContain(String(bystander.email));
  });
});
