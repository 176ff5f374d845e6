import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { addSuppressions, identifiersOf, normalIdentifier, normalPhone } from '../../src/privacy/suppression.ts';
import { mapsTool } from '../../src/tools/maps.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * Suppression where rows are produced: an account's do-not-contact list (REST and MCP) and the
 * deployment's list drop rows about the people on them from a run, counted on the run and never billed;
 * another account's list changes nothing for this one.
 */

const MAPS = { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 40 };
type Place = { name: string; emails: string[]; phone: string | null; website: string | null };

let t: TestApp;
let key: string;
let other: string;
let baseline: Place[];

beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key } = await t.account({ creditsMicros: 20_000_000n }));
  ({ apiKey: other } = await t.account({ creditsMicros: 20_000_000n }));
  baseline = (await t.runTool(other, '/api/v1/scrape/maps', MAPS)).rows as Place[];
});
afterAll(() => t?.stop());

describe('identifiers', () => {
  it('normalises what a list holds, and refuses what cannot be one, in words', () => {
    expect(normalIdentifier('email', ' Jane.Doe@Acme.COM ')).toEqual({ value: 'jane.doe@acme.com' });
    expect(normalIdentifier('phone', '(303) 555-0142')).toEqual({ value: '+13035550142' });
    expect(normalIdentifier('phone', '+44 20 7946 0958')).toEqual({ value: '+442079460958' });
    expect(normalIdentifier('domain', '@www.Acme.com')).toEqual({ value: 'acme.com' });
    expect(normalIdentifier('profile', 'https://www.linkedin.com/in/Jane-Doe/?trk=x')).toEqual({
      value: 'linkedin.com/in/jane-doe',
    });
    expect(normalIdentifier('email', 'not an address')).toEqual({ refused: 'must be an e-mail address' });
    expect(normalIdentifier('phone', '12')).toMatchObject({ refused: expect.stringContaining('phone number') });
    expect(normalIdentifier('profile', 'https://example.com/me')).toMatchObject({ refused: expect.any(String) });
  });

  it('reads the catalog’s written US numbers as the phone library does', () => {
    for (let i = 0; i < 2_000; i++) {
      const digits = String(2_000_000_000 + ((i * 7_919_113) % 7_999_999_999)).padStart(10, '0');
      const written = `+1 ${digits.slice(0, 3)}-${digits.slice(3, 6)}-${digits.slice(6)}`;
      const parsed = parsePhoneNumberFromString(written, 'US');
      expect(normalPhone(written), written).toBe(parsed?.isPossible() ? parsed.number : undefined);
    }
  });

  it('finds a row’s e-mails anywhere in it, its phones in phone columns and its profiles', () => {
    const ids = identifiersOf({
      name: 'Smile Dental',
      emails: ['Office@Smile-Dental.com'],
      notes: 'ask for jane@smile-dental.com',
      phone: '303-555-0101',
      linkedin_url: 'linkedin.com/in/jane-doe/',
      rating: 4.5,
    });
    expect([...ids.email]).toEqual(['office@smile-dental.com', 'jane@smile-dental.com']);
    expect([...ids.domain]).toEqual(['smile-dental.com']);
    expect([...ids.phone]).toEqual(['+13035550101']);
    expect([...ids.profile]).toEqual(['linkedin.com/in/jane-doe']);
  });
});

describe('a run', () => {
  it('drops rows about people on the account’s list: not returned, counted, not billed', async () => {
    const withEmail = baseline.filter((p) => p.emails.length > 0);
    expect(withEmail.length).toBeGreaterThan(2);
    const [first, second] = withEmail as [Place, Place];
    const added = await t.request('POST', '/api/v1/suppressions', {
      key,
      body: {
        entries: [
          { kind: 'email', value: first.emails[0]!.toUpperCase() },
          { kind: 'domain', value: second.emails[0]!.split('@')[1]! },
        ],
        note: 'asked by reply',
      },
    });
    expect(added.status, added.text).toBe(200);
    expect(added.body).toEqual({ added: 2, alreadyListed: 0 });
    const again = await t.request('POST', '/api/v1/suppressions', {
      key,
      body: { entries: [{ kind: 'email', value: first.emails[0] }] },
    });
    expect(again.body).toEqual({ added: 0, alreadyListed: 1 });

    const gone = (p: Place) =>
      p.emails.some(
        (e) => e.toLowerCase() === first.emails[0]!.toLowerCase() || e.endsWith(`@${second.emails[0]!.split('@')[1]}`),
      );
    const expectedGone = baseline.filter(gone).length;
    const { rows, status } = await t.runTool(key, '/api/v1/scrape/maps', MAPS);
    expect(rows).toHaveLength(baseline.length - expectedGone);
    expect((rows as Place[]).some(gone)).toBe(false);
    expect(status).toMatchObject({ suppressed: expectedGone, billed_units: rows.length });
    expect(status.cost).toBeCloseTo((rows.length * Number(mapsTool.price.unitMicros)) / 1e6, 6);

    // Another account's rows are its own list's business.
    const others = await t.runTool(other, '/api/v1/scrape/maps', MAPS);
    expect(others.rows).toHaveLength(baseline.length);
    expect(others.status.suppressed).toBeUndefined();
  });

  it('drops rows about people on the deployment’s list for every account', async () => {
    const target = baseline.find((p) => p.phone)!;
    const phone = normalIdentifier('phone', target.phone!);
    expect('value' in phone).toBe(true);
    await addSuppressions(
      t.app.core.db,
      null,
      [{ kind: 'phone', value: (phone as { value: string }).value }],
      'operator',
    );
    const { rows, status } = await t.runTool(other, '/api/v1/scrape/maps', MAPS);
    expect((rows as Place[]).some((p) => p.name === target.name && p.phone === target.phone)).toBe(false);
    expect(status.suppressed).toBeGreaterThanOrEqual(1);
  });
});

describe('the lead database', () => {
  it('leaves people on the list out of a search, costing no allowance', async () => {
    const search = async (k: string) =>
      (await t.request('GET', '/api/v1/database/leads?title=vp&limit=20', { key: k })).body as {
        leads: { email?: string | null }[];
        allowance_remaining?: number;
      };
    const before = await search(other);
    const person = before.leads.find((l) => l.email);
    expect(person?.email).toBeTruthy();
    await t.request('POST', '/api/v1/suppressions', {
      key: other,
      body: { entries: [{ kind: 'email', value: person?.email }] },
    });
    const after = await search(other);
    expect(after.leads.map((l) => l.email)).not.toContain(person?.email);
    expect(after.leads.length).toBe(before.leads.length - 1);
  });
});

describe('enrichment', () => {
  it('answers a match about a suppressed person as not found, and takes no allowance for it', async () => {
    const found = (await t.request('GET', '/api/v1/database/leads?title=director&limit=5', { key })).body.leads as {
      email?: string | null;
    }[];
    const email = found.find((l) => l.email)?.email as string;
    const enrich = async () =>
      (await t.request('POST', '/api/v1/enrich', { key, body: { rows: [{ email }] } })).body as {
        rows: { match_status: string }[];
        summary: { matched: number };
      };
    expect((await enrich()).rows[0]?.match_status).toBe('matched');
    await t.request('POST', '/api/v1/suppressions', { key, body: { entries: [{ kind: 'email', value: email }] } });
    const after = await enrich();
    expect(after.rows[0]?.match_status).toBe('not_found');
    expect(after.summary.matched).toBe(0);
    expect(JSON.stringify(after.rows[0])).not.toMatch(/first_name|company/);
  });
});

describe('the list', () => {
  it('is read newest first, refuses a bad entry at its place, and owners take entries off it', async () => {
    const bad = await t.request('POST', '/api/v1/suppressions', {
      key,
      body: {
        entries: [
          { kind: 'email', value: 'ok@acme.com' },
          { kind: 'phone', value: 'call me' },
        ],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ path: 'entries.1.value', message: expect.stringContaining('phone') }]);
    const listed = await t.request('GET', '/api/v1/suppressions', { key });
    expect(listed.status).toBe(200);
    // Newest first (the enrichment test's entry); the two added together in no order between them.
    expect(listed.body.entries.map((e: { kind: string }) => e.kind)).toHaveLength(3);
    expect(
      listed.body.entries
        .slice(1)
        .map((e: { kind: string }) => e.kind)
        .sort(),
    ).toEqual(['domain', 'email']);
    expect(listed.body.entries[1]).toMatchObject({ source: 'account', note: 'asked by reply' });
    const id = listed.body.entries[1].id;
    const removed = await t.request('DELETE', `/api/v1/suppressions/${id}`, { key });
    expect(removed.status, removed.text).toBe(204);
    const missing = await t.request('DELETE', `/api/v1/suppressions/${id}`, { key });
    expect(missing.status).toBe(404);
    // Another account cannot read or remove this one's entries.
    const theirs = await t.request('GET', '/api/v1/suppressions', { key: other });
    const ours = listed.body.entries.map((e: { id: string }) => e.id);
    expect(theirs.body.entries.filter((e: { id: string }) => ours.includes(e.id))).toEqual([]);
    const notTheirs = await t.request('DELETE', `/api/v1/suppressions/${listed.body.entries[2].id}`, { key: other });
    expect(notTheirs.status).toBe(404);
  });
});

describe('on GraphQL', () => {
  it('adds, pages and removes entries, a refused value said at its place', async () => {
    const added = await t.graphql(
      key,
      `mutation($input: AddToDoNotContactInput!) {
        addToDoNotContact(input: $input) { added alreadyListed userErrors { field code message } }
      }`,
      { input: { entries: [{ kind: 'PROFILE', value: 'https://www.linkedin.com/in/Jane-Doe/' }], note: 'asked' } },
    );
    expect(added.body.data.addToDoNotContact).toEqual({ added: 1, alreadyListed: 0, userErrors: [] });
    const refused = await t.graphql(
      key,
      `mutation($input: AddToDoNotContactInput!) { addToDoNotContact(input: $input) { added userErrors { field code } } }`,
      { input: { entries: [{ kind: 'PHONE', value: 'call me' }] } },
    );
    expect(refused.body.data.addToDoNotContact).toEqual({
      added: null,
      userErrors: [{ field: ['input', 'entries', '0', 'value'], code: 'VALIDATION_FAILED' }],
    });
    const listed = await t.graphql(
      key,
      `{ doNotContact(first: 1) { totalCount nodes { id kind value source note } pageInfo { hasNextPage } } }`,
    );
    const page = listed.body.data.doNotContact;
    expect(page.nodes).toEqual([
      {
        id: expect.stringMatching(/^sup_/),
        kind: 'PROFILE',
        value: 'linkedin.com/in/jane-doe',
        source: 'ACCOUNT',
        note: 'asked',
      },
    ]);
    expect(page.pageInfo.hasNextPage).toBe(true);
    expect(page.totalCount).toBeGreaterThan(1);
    const removed = await t.graphql(
      key,
      `mutation($id: ID!) { removeFromDoNotContact(id: $id) { removedEntryId userErrors { code } } }`,
      { id: page.nodes[0].id },
    );
    expect(removed.body.data.removeFromDoNotContact).toEqual({ removedEntryId: page.nodes[0].id, userErrors: [] });
    const again = await t.graphql(
      other,
      `mutation($id: ID!) { removeFromDoNotContact(id: $id) { removedEntryId userErrors { code message } } }`,
      { id: page.nodes[0].id },
    );
    expect(again.body.data.removeFromDoNotContact.userErrors[0].code).toBe('SUPPRESSION_NOT_FOUND');
    expect(again.body.data.removeFromDoNotContact.userErrors[0].message).not.toMatch(/\/api\/v1|404/);
  });
});
