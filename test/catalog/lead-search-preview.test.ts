import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mayDeleteSavedSearch } from '../../src/workflows/saved-searches.ts';
import type { Principal } from '../../src/accounts/principal.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * The free lead search (`leadSearch`): the metered search's filters, paging and total, without emails and
 * phones and without spending the daily allowance; `revealLeads` hands over chosen people, metered and
 * all or nothing; saved searches, checked at the boundary and kept per account.
 */

const ALLOWANCE = 40;
let t: TestApp;
let a: { accountId: string; apiKey: string };
let b: { accountId: string; apiKey: string };

beforeAll(async () => {
  t = await startTestApp({ worker: false, config: { dailyDatabaseRecords: ALLOWANCE } });
  a = await t.account({ plan: 'growth' });
  b = await t.account({ plan: 'growth' });
});
afterAll(() => t?.stop());

const used = async (accountId: string) => {
  const [row] = await t.app.core.sql<{ used: number }[]>`
    select coalesce(sum(used), 0)::int as used from daily_usage where account_id = ${accountId} and kind = 'database'`;
  return row!.used;
};
const received = async (accountId: string) => {
  const [row] = await t.app.core.sql<{ n: number }[]>`
    select count(*)::int as n from delivered_lead where account_id = ${accountId}`;
  return row!.n;
};

const SEARCH = `query($filter: LeadFilter, $first: Int, $after: String) {
  leadSearch(filter: $filter, first: $first, after: $after) {
    totalCount totalCountIsEstimate dailyAllowanceRemaining pageInfo { hasNextPage endCursor }
    nodes { id databaseId fullName title seniority hasEmail emailStatus hasPhone received linkedinUrl
      company { name domain } }
  }
}`;
const LEADS = `query($filter: LeadFilter, $first: Int) {
  leads(filter: $filter, first: $first) { totalCount nodes { id email phone } }
}`;
const REVEAL = `mutation($ids: [ID!]!) {
  revealLeads(ids: $ids) {
    leads { id email phone mobile fullName company { domain } } counted dailyAllowanceRemaining
    userErrors { code field message }
  }
}`;

describe('leadSearch', () => {
  it('has no contact fields: LeadPreview declares no email, phone or mobile', async () => {
    const res = await t.graphql(a.apiKey, `{ __type(name: "LeadPreview") { fields { name } } }`);
    const names = res.body.data.__type.fields.map((f: { name: string }) => f.name);
    expect(names).toEqual(expect.arrayContaining(['hasEmail', 'hasPhone', 'emailStatus', 'received']));
    for (const contact of ['email', 'phone', 'mobile']) expect(names).not.toContain(contact);
    const asked = await t.graphql(a.apiKey, `{ leadSearch(first: 1) { nodes { email } } }`);
    expect(asked.body.errors?.[0]?.message).toMatch(/Cannot query field "email" on type "LeadPreview"/);
  });

  it('answers the metered search’s total and people, spending and saving nothing', async () => {
    const filter = { seniority: ['director', 'vp'] };
    const before = await used(a.accountId);
    const res = await t.graphql(a.apiKey, SEARCH, { filter, first: 25 });
    expect(res.body.errors).toBeUndefined();
    const page = res.body.data.leadSearch;
    expect(page.nodes).toHaveLength(25);
    expect(page.dailyAllowanceRemaining).toBe(ALLOWANCE - before);
    expect(JSON.stringify(page)).not.toMatch(/@/);
    expect(page.nodes.every((n: { received: boolean }) => n.received === false)).toBe(true);
    expect(await used(a.accountId)).toBe(before);
    expect(await received(a.accountId)).toBe(0);
    // Another account's metered search of the same filter: the same total and the same people, with emails.
    const metered = await t.graphql(b.apiKey, LEADS, { filter, first: 25 });
    expect(metered.body.data.leads.totalCount).toBe(page.totalCount);
    expect(metered.body.data.leads.nodes.map((n: { id: string }) => n.id)).toEqual(
      page.nodes.map((n: { id: string }) => n.id),
    );
    const withEmail = metered.body.data.leads.nodes.map((n: { email: string | null }) => n.email !== null);
    expect(page.nodes.map((n: { hasEmail: boolean }) => n.hasEmail)).toEqual(withEmail);
    await t.app.core.sql`delete from daily_usage where account_id = ${b.accountId}`;
    await t.app.core.sql`delete from delivered_lead where account_id = ${b.accountId}`;
  });

  it('facets narrow the total, and pages follow the cursor', async () => {
    const all = (await t.graphql(a.apiKey, SEARCH, { first: 1 })).body.data.leadSearch.totalCount;
    const seniors = (await t.graphql(a.apiKey, SEARCH, { filter: { seniority: ['director'] }, first: 1 })).body.data
      .leadSearch;
    const narrower = (
      await t.graphql(a.apiKey, SEARCH, { filter: { seniority: ['director'], hasEmail: true }, first: 1 })
    ).body.data.leadSearch;
    expect(seniors.totalCount).toBeGreaterThan(0);
    expect(seniors.totalCount).toBeLessThan(all);
    expect(narrower.totalCount).toBeLessThanOrEqual(seniors.totalCount);
    const next = await t.graphql(a.apiKey, SEARCH, {
      filter: { seniority: ['director'] },
      first: 1,
      after: seniors.pageInfo.endCursor,
    });
    expect(Number(next.body.data.leadSearch.nodes[0].databaseId)).toBeGreaterThan(Number(seniors.nodes[0].databaseId));
  });

  it('refuses as every query does: no key, a plan below the lead database, a bad filter', async () => {
    const anonymous = await t.request('POST', '/graphql', { body: { query: SEARCH } });
    expect(anonymous.status).toBe(401);
    const starter = await t.account({ plan: 'starter' });
    const locked = await t.graphql(starter.apiKey, SEARCH, {});
    expect(locked.body.data.leadSearch).toBeNull();
    expect(locked.body.errors[0].extensions.code).toBe('PLAN_REQUIRED');
    const bad = await t.graphql(a.apiKey, SEARCH, { filter: { seniority: ['astronaut'] } });
    expect(bad.body.errors[0].extensions.code).toBe('VALIDATION_FAILED');
  });
});

describe('revealLeads', () => {
  it('hands over exactly the people asked for, counting the new ones once', async () => {
    const page = (await t.graphql(a.apiKey, SEARCH, { filter: { hasEmail: true }, first: 5 })).body.data.leadSearch;
    const ids = page.nodes.map((n: { id: string }) => n.id).slice(0, 3);
    const before = await used(a.accountId);
    const res = await t.graphql(a.apiKey, REVEAL, { ids });
    const payload = res.body.data.revealLeads;
    expect(payload.userErrors).toEqual([]);
    expect(payload.leads.map((l: { id: string }) => l.id)).toEqual(ids);
    expect(payload.leads.every((l: { email: string | null }) => l.email?.includes('@'))).toBe(true);
    expect(payload.counted).toBe(3);
    expect(await used(a.accountId)).toBe(before + 3);
    expect(payload.dailyAllowanceRemaining).toBe(ALLOWANCE - before - 3);
    // Again, with one more: only the new person counts; the preview now says who was received.
    const again = await t.graphql(a.apiKey, REVEAL, { ids: page.nodes.map((n: { id: string }) => n.id).slice(0, 4) });
    expect(again.body.data.revealLeads.counted).toBe(1);
    expect(await used(a.accountId)).toBe(before + 4);
    const seen = (await t.graphql(a.apiKey, SEARCH, { filter: { hasEmail: true }, first: 5 })).body.data.leadSearch;
    expect(seen.nodes.map((n: { received: boolean }) => n.received)).toEqual([true, true, true, true, false]);
  });

  it('refuses, counting nothing: unknown and malformed ids, more than the allowance left, another plan', async () => {
    const before = await used(a.accountId);
    const unknown = (await t.graphql(a.apiKey, REVEAL, { ids: ['lead_1', 'lead_999999999'] })).body.data.revealLeads;
    expect(unknown.leads).toBeNull();
    expect(unknown.userErrors).toEqual([expect.objectContaining({ code: 'NOT_FOUND', field: ['ids', '1'] })]);
    const malformed = (await t.graphql(a.apiKey, REVEAL, { ids: ['run_1'] })).body.data.revealLeads;
    expect(malformed.userErrors).toEqual([expect.objectContaining({ code: 'VALIDATION_FAILED', field: ['ids', '0'] })]);
    const left = ALLOWANCE - before;
    const many = (await t.graphql(a.apiKey, SEARCH, { filter: { excludeDelivered: true }, first: left + 1 })).body.data
      .leadSearch.nodes;
    const over = (await t.graphql(a.apiKey, REVEAL, { ids: many.map((n: { id: string }) => n.id) })).body.data
      .revealLeads;
    expect(over.userErrors[0].code).toBe('DAILY_LIMIT_REACHED');
    expect(over.userErrors[0].message).toContain(`${left} are left`);
    expect(await used(a.accountId)).toBe(before);
    const starter = await t.account({ plan: 'starter' });
    const locked = (await t.graphql(starter.apiKey, REVEAL, { ids: ['lead_1'] })).body.data.revealLeads;
    expect(locked.userErrors[0].code).toBe('PLAN_REQUIRED');
  });

  it('never hands over a person on the account’s do-not-contact list', async () => {
    const [person] = await t.app.core.sql<{ id: string; email: string }[]>`
      select id::text, email from person where email is not null order by id desc limit 1`;
    await t.app.core.sql`insert into suppression (id, account_id, kind, value, source)
      values ('sup_leadsearchtest', ${b.accountId}, 'email', ${person!.email}, 'account')`;
    const res = (await t.graphql(b.apiKey, REVEAL, { ids: [`lead_${person!.id}`] })).body.data.revealLeads;
    expect(res.userErrors[0].code).toBe('NOT_FOUND');
    expect(await used(b.accountId)).toBe(0);
  });
});

describe('the preview and the reveal on REST and MCP', () => {
  const mcp = async (key: string, name: string, args: unknown) =>
    (
      await t.request('POST', '/mcp?tools=all', {
        key,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
      })
    ).body.result as { isError?: boolean; structuredContent: Record<string, unknown>; content: { text: string }[] };
  type Record_ = Record<string, unknown> & { id: number };

  it('answers GraphQL’s people and total for free, then reveals chosen ones, counting each new one once', async () => {
    const c = await t.account({ plan: 'growth' });
    const preview = await t.request('GET', '/api/v1/database/leads/preview?hasEmail=true&limit=5', { key: c.apiKey });
    expect(preview.status).toBe(200);
    const people = preview.body.leads as Record_[];
    const graph = (await t.graphql(c.apiKey, SEARCH, { filter: { hasEmail: true }, first: 5 })).body.data.leadSearch;
    expect(people.map((p) => String(p.id))).toEqual(graph.nodes.map((n: { databaseId: string }) => n.databaseId));
    expect(preview.body.pagination.total).toBe(graph.totalCount);
    for (const person of people) {
      for (const contact of ['email', 'phone', 'mobile']) expect(person).not.toHaveProperty(contact);
      expect(person).toMatchObject({ has_email: true, received: false, full_name: expect.any(String) });
    }
    expect(preview.body.daily_allowance).toEqual({ remaining: ALLOWANCE });
    expect([await used(c.accountId), await received(c.accountId)]).toEqual([0, 0]);

    const ids = people.map((p) => p.id);
    const revealed = await t.request('POST', '/api/v1/database/leads/reveal', {
      key: c.apiKey,
      body: { ids: ids.slice(0, 2) },
    });
    expect(revealed.status).toBe(200);
    expect(revealed.body.leads.map((l: Record_) => l.id)).toEqual(ids.slice(0, 2));
    expect(revealed.body.leads.every((l: Record_) => String(l.email).includes('@'))).toBe(true);
    expect(revealed.body).toMatchObject({ counted: 2, daily_allowance: { remaining: ALLOWANCE - 2 } });

    // MCP: the same preview, now knowing who was received; a reveal of one received and one new person.
    const listed = await mcp(c.apiKey, 'preview_lead_database', { hasEmail: true, limit: 5 });
    expect(listed.isError).toBeFalsy();
    const again = listed.structuredContent.leads as Record_[];
    expect(again.map((p) => [p.id, p.received])).toEqual(ids.map((id, i) => [id, i < 2]));
    const one = await mcp(c.apiKey, 'reveal_leads', { ids: [ids[0], String(ids[2])] });
    expect(one.isError).toBeFalsy();
    expect(one.structuredContent).toMatchObject({ counted: 1, daily_allowance: { remaining: ALLOWANCE - 3 } });
    expect([await used(c.accountId), await received(c.accountId)]).toEqual([3, 3]);
  });

  it('refuses as the lead search does, counting nothing', async () => {
    const c = await t.account({ plan: 'growth' });
    const reveal = (key: string, body: unknown) =>
      t.request('POST', '/api/v1/database/leads/reveal', { key, body: body as Record<string, unknown> });
    const unknown = await reveal(c.apiKey, { ids: [1, 999999999] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({
      code: 'not_found',
      details: [expect.objectContaining({ path: 'ids.1' })],
    });
    const malformed = await reveal(c.apiKey, { ids: ['abc'] });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details).toEqual([expect.objectContaining({ path: 'ids.0' })]);
    expect((await reveal(c.apiKey, { ids: [] })).status).toBe(400);
    expect((await reveal(c.apiKey, { ids: [1], extra: true })).status).toBe(400);
    const starter = await t.account({ plan: 'starter' });
    const locked = await reveal(starter.apiKey, { ids: [1] });
    expect([locked.status, locked.body.error.code]).toEqual([403, 'plan_required']);
    const lockedPreview = await t.request('GET', '/api/v1/database/leads/preview', { key: starter.apiKey });
    expect([lockedPreview.status, lockedPreview.body.error.code]).toEqual([403, 'plan_required']);
    // Below the plan MCP offers neither tool, and a call anyway names tools/list.
    for (const tool of ['preview_lead_database', 'reveal_leads']) {
      const below = await t.request('POST', '/mcp?tools=all', {
        key: starter.apiKey,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } },
      });
      expect(below.body.error, tool).toMatchObject({ code: -32602, message: expect.stringContaining('tools/list') });
    }
    const onMcp = await mcp(c.apiKey, 'reveal_leads', { ids: [999999999] });
    expect(onMcp.isError).toBe(true);
    expect(onMcp.content[0]!.text).toContain('not_found');
    expect(await used(c.accountId)).toBe(0);
  });
});

const CREATE = `mutation($input: CreateSavedSearchInput!) {
  createSavedSearch(input: $input) {
    savedSearch { id name filter { seniority country revenueMin hasEmail title } createdByName viewerMayDelete }
    userErrors { code field message } }
}`;
const LIST = `{ savedSearches { totalCount nodes { id name filter { hasEmail } } } }`;
const NODE = `query($id: ID!) { node(id: $id) { id ... on SavedSearch { name } } }`;
const DELETE = `mutation($id: ID!) { deleteSavedSearch(id: $id) { deletedId userErrors { code field message } } }`;

describe('saved searches', () => {
  it('are saved, normalised, listed for their account only, and deleted', async () => {
    const filter = { seniority: ['C-Suite'], country: ['US'], revenueMin: '1000000', hasEmail: true };
    const res = await t.graphql(a.apiKey, CREATE, { input: { name: ' Chiefs in the US ', filter } });
    const saved = res.body.data.createSavedSearch.savedSearch;
    expect(res.body.data.createSavedSearch.userErrors).toEqual([]);
    expect(saved).toMatchObject({ name: 'Chiefs in the US', createdByName: null, viewerMayDelete: true });
    expect(saved.filter).toEqual({
      seniority: ['c_suite'],
      country: ['US'],
      revenueMin: '1000000.00',
      hasEmail: true,
      title: null,
    });
    expect((await t.graphql(a.apiKey, NODE, { id: saved.id })).body.data.node).toEqual({
      id: saved.id,
      name: 'Chiefs in the US',
    });
    expect((await t.graphql(b.apiKey, NODE, { id: saved.id })).body.data.node).toBeNull();
    expect((await t.graphql(a.apiKey, LIST)).body.data.savedSearches.nodes.map((n: { id: string }) => n.id)).toEqual([
      saved.id,
    ]);
    expect((await t.graphql(b.apiKey, LIST)).body.data.savedSearches.totalCount).toBe(0);
    // Another account's id is unknown to it, and its deletion changes nothing.
    const foreign = (await t.graphql(b.apiKey, DELETE, { id: saved.id })).body.data.deleteSavedSearch;
    expect(foreign.userErrors).toEqual([expect.objectContaining({ code: 'SAVED_SEARCH_NOT_FOUND' })]);
    const dup = (await t.graphql(a.apiKey, CREATE, { input: { name: 'Chiefs in the US', filter } })).body.data;
    expect(dup.createSavedSearch.userErrors).toEqual([
      expect.objectContaining({ code: 'SAVED_SEARCH_EXISTS', field: ['input', 'name'] }),
    ]);
    const gone = (await t.graphql(a.apiKey, DELETE, { id: saved.id })).body.data.deleteSavedSearch;
    expect(gone).toEqual({ deletedId: saved.id, userErrors: [] });
    expect((await t.graphql(a.apiKey, LIST)).body.data.savedSearches.totalCount).toBe(0);
  });

  it('refuses at the field: a name of 0 or 101 characters, a filter the search refuses, no filter', async () => {
    const refused = async (input: unknown) =>
      (await t.graphql(a.apiKey, CREATE, { input })).body.data.createSavedSearch.userErrors;
    expect(await refused({ name: '  ', filter: { hasEmail: true } })).toEqual([
      expect.objectContaining({ code: 'VALIDATION_FAILED', field: ['input', 'name'] }),
    ]);
    expect(await refused({ name: 'x'.repeat(101), filter: { hasEmail: true } })).toEqual([
      expect.objectContaining({ field: ['input', 'name'], message: expect.stringMatching(/100 characters/) }),
    ]);
    const [seniority] = await refused({ name: 'Astronauts', filter: { seniority: ['astronaut'] } });
    expect(seniority.field.slice(0, 3)).toEqual(['input', 'filter', 'seniority']);
    expect(await refused({ name: 'Upside down', filter: { minEmployees: 50, maxEmployees: 10 } })).toEqual([
      expect.objectContaining({ field: ['input', 'filter', 'maxEmployees'] }),
    ]);
    expect(await refused({ name: 'Everyone', filter: {} })).toEqual([
      expect.objectContaining({ field: ['input', 'filter'], message: expect.stringMatching(/at least one filter/) }),
    ]);
  });

  it('stop at 100 an account', async () => {
    await t.app.core.sql`insert into saved_search (id, account_id, name, filter)
      select 'srch_cap' || n, ${b.accountId}, 'Search ' || n, '{"hasEmail": true}'::jsonb
      from generate_series(1, 100) n`;
    const res = (await t.graphql(b.apiKey, CREATE, { input: { name: 'One more', filter: { hasEmail: true } } })).body
      .data.createSavedSearch;
    expect(res.userErrors).toEqual([expect.objectContaining({ code: 'SAVED_SEARCH_LIMIT' })]);
  });

  it('are deleted by whoever saved them, owners and admins, and operator keys; not by other members', () => {
    const base: Principal = {
      accountId: 'acc',
      keyId: 'k',
      keyPrefix: '',
      plan: 'growth',
      subscriptionStatus: 'ACTIVE',
    };
    const jane = { createdBy: 'usr_jane' };
    expect(mayDeleteSavedSearch({ ...base, userId: 'usr_jane', role: 'member' }, jane)).toBe(true);
    expect(mayDeleteSavedSearch({ ...base, userId: 'usr_joe', role: 'member' }, jane)).toBe(false);
    expect(mayDeleteSavedSearch({ ...base, userId: 'usr_ann', role: 'admin' }, jane)).toBe(true);
    expect(mayDeleteSavedSearch({ ...base, keyRole: 'member' }, jane)).toBe(false);
    expect(mayDeleteSavedSearch({ ...base, keyRole: 'owner' }, jane)).toBe(true);
    expect(mayDeleteSavedSearch(base, { createdBy: null })).toBe(true);
  });
});
