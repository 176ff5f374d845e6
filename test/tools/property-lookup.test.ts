import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { US_STATES } from '../../src/shared/geo.ts';
import {
  canonicalAddress,
  exactKeys,
  parseAddress,
  type ParsedAddress,
} from '../../src/tools/lib/properties/address.ts';
import { propertyLookupTool } from '../../src/tools/property-lookup.ts';
import { propertyOwnerContactTool } from '../../src/tools/property-owner-contact.ts';
import type { Sources } from '../../src/sources/types.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { holdingSources } from '../helpers/sources.ts';
import { graphql } from '../helpers/gql/index.ts';

const PATH = '/api/v1/scrape/property-lookup';
const LOOKUP_MICROS = propertyLookupTool.price.unitMicros;
const OWNER_MICROS = propertyOwnerContactTool.price.unitMicros;

let t: TestApp;
let key: string;

interface CatalogProperty {
  id: number;
  address_key: string;
  street: string;
  city: string;
  state: string;
  zip: string;
  [column: string]: unknown;
}

beforeAll(async () => ({ t, key } = await appWithAccount()));
afterAll(() => t?.stop());

/** A catalog property picked by a condition, with the columns as the result rows carry them. */
async function property(where: string): Promise<CatalogProperty> {
  const [row] = await t.app.core.sql.unsafe(`
    select id::int, address_key, street, city, state, zip, lat, lng, property_type, beds, baths, sqft, lot_sqft, year_built,
      estimated_value::float8, listing_status, list_price::float8, days_on_market, last_sold_date::text, last_sold_price::float8,
      price_history, tax_history, comparables, schools, owner_name, owner_mailing_address, owner_phones, owner_emails
    from property where ${where} order by id limit 1`);
  if (!row) throw new Error(`no catalog property where ${where}`);
  return row as unknown as CatalogProperty;
}

const full = (p: CatalogProperty) => `${p.street}, ${p.city}, ${p.state} ${p.zip}`;

/**
 * Holds the property source's reads for `accountId`'s lookup and owner-contact runs, each once its
 * run has stored rows (`holdingSources`), until `release`; `held(2)` resolves once both wait. The
 * worker runs on this process's core, so the held sources stand in for its own until `restore`.
 */
function holdLookups(accountId: string) {
  const readers: Record<string, string> = { details: 'property-lookup', ownerContacts: 'property-owner-contact' };
  const core = t.app.core as { sources: Sources };
  const own = core.sources;
  const held = holdingSources(own, async (source, method) => {
    const tool = source === 'properties' ? readers[method] : undefined;
    if (!tool) return undefined;
    const [stored] = await t.app.core
      .sql`select item_count from run where account_id = ${accountId} and tool = ${tool}`;
    return (stored?.item_count ?? 0) > 0 ? tool : undefined;
  });
  core.sources = held.sources;
  return {
    ...held,
    restore: () => {
      core.sources = own;
    },
  };
}

/** The row property lookup should give for a found property. */
function lookupRow(input: string, p: CatalogProperty, matchType: string) {
  return {
    input_address: input,
    status: 'found',
    match_type: matchType,
    address: full(p),
    street: p.street,
    city: p.city,
    state: p.state,
    zip: p.zip,
    latitude: p.lat,
    longitude: p.lng,
    property_type: p.property_type,
    beds: p.beds,
    baths: p.baths,
    sqft: p.sqft,
    lot_sqft: p.lot_sqft,
    year_built: p.year_built,
    estimated_value: p.estimated_value,
    listing_status: p.listing_status,
    list_price: p.list_price,
    days_on_market: p.days_on_market,
    last_sold_date: p.last_sold_date,
    last_sold_price: p.last_sold_price,
    price_history: p.price_history,
    tax_history: p.tax_history,
    comparables: p.comparables,
    schools: p.schools,
    owner_name: p.owner_name,
    owner_mailing_address: p.owner_mailing_address,
    message: null,
  };
}

function emptyRow(input: string, status: string, message: string) {
  return Object.fromEntries(
    propertyLookupTool.columns.map((c) => [
      c.key,
      c.key === 'input_address' ? input : c.key === 'status' ? status : c.key === 'message' ? message : null,
    ]),
  );
}

interface RunRow {
  tool: string;
  status: string;
  requested: number;
  item_count: number;
  charged: bigint;
  billed_units: number;
  parent_run_id: string | null;
  file_name: string | null;
}

async function run(runId: string): Promise<RunRow> {
  const [row] = await t.app.core
    .sql`select tool, status, requested, item_count, charged_micros::bigint as charged, billed_units, parent_run_id, file_name from run where id = ${runId}`;
  return { ...(row as unknown as RunRow), charged: BigInt(row!.charged) };
}

const parsed = (text: string) => {
  const result = parseAddress(text);
  if ('error' in result) throw new Error(`${text}: ${result.error}`);
  return result as ParsedAddress;
};

describe('address normalisation', () => {
  it.each([
    ['1234 Main Street, Denver, CO 80202', '1234 main st', 'denver', 'CO', '80202'],
    ['  1234   MAIN  STREET ,  denver , colorado   80202-1234 ', '1234 main st', 'denver', 'CO', '80202'],
    ['1234 main st denver co 80202', '1234 main st', 'denver', 'CO', '80202'],
    ['1234 Main St, Apt 5, Denver, CO 80202', '1234 main st apt 5', 'denver', 'CO', '80202'],
    ['1234 Main St Apartment 5 Denver CO 80202', '1234 main st apt 5', 'denver', 'CO', '80202'],
    ['1234 Main St #5, Denver, CO 80202, USA', '1234 main st # 5', 'denver', 'CO', '80202'],
    ['12 West 3rd Street North, Kansas City, Missouri 64105', '12 w 3rd st n', 'kansas city', 'MO', '64105'],
    ['12 W. 3rd St. N., Kansas City, MO 64105', '12 w 3rd st n', 'kansas city', 'MO', '64105'],
    ['55 First Avenue, Seattle, Washington', '55 1st ave', 'seattle', 'WA', null],
    ['100 Lake Drive Salt Lake City UT 84101', '100 lake dr', 'salt lake city', 'UT', '84101'],
    ['10 River Park Boulevard Denver CO', '10 river park blvd', 'denver', 'CO', null],
    ['1234 North St, Denver, CO', '1234 north st', 'denver', 'CO', null],
    ['55 Broadway, New York, New York 10001', '55 broadway', 'new york', 'NY', '10001'],
    ['55 Main St, Washington', '55 main st', 'washington', null, null],
    ['1234 Main St, 80202', '1234 main st', null, null, '80202'],
    ['123 Pine Ct, 80202', '123 pine ct', null, null, '80202'],
    ['12 Main St NE 30301', '12 main st ne', null, null, '30301'],
    ['123 Pine Ct Hartford CT 06101', '123 pine ct', 'hartford', 'CT', '06101'],
    ['1234 Main St CO 80202', '1234 main st', null, 'CO', '80202'],
  ])('%s', (text, line, city, state, zip) => {
    const address = parsed(text);
    expect({ line: address.street.line, city: address.city, state: address.state, zip: address.zip }).toEqual({
      line,
      city,
      state,
      zip,
    });
  });

  it('gives the catalog key for a full address, trying it with and without the unit', () => {
    expect(exactKeys(parsed('1234 Main Street, Apt 5, Denver, Colorado 80202'))).toEqual([
      '1234 main st apt 5|denver|co|80202',
      '1234 main st|denver|co|80202',
    ]);
    expect(exactKeys(parsed('1234 Main Street, Denver, CO'))).toEqual([]);
    expect(canonicalAddress(parsed('1234 Main Street, Denver, Colorado 80202'))).toBe(
      canonicalAddress(parsed('1234 main st denver co 80202-0001')),
    );
  });

  it('explains what an unusable address lacks', () => {
    expect(parseAddress('Main St, Denver, CO 80202')).toEqual({
      error: expect.stringMatching(/must start with a house number/),
    });
    expect(parseAddress('1234 Main St')).toEqual({
      error: expect.stringMatching(/needs a city and state or a zip code/),
    });
    expect(parseAddress('80202')).toEqual({ error: expect.stringMatching(/house number/) });
  });

  it('reads every catalog address back to its own key', async () => {
    const rows = await t.app.core.sql`select address_key, street, city, state, zip from property`;
    expect(rows.length).toBeGreaterThan(1000);
    const misses = rows.filter(
      (r) => exactKeys(parsed(`${r.street}, ${r.city}, ${r.state} ${r.zip}`))[0] !== r.address_key,
    );
    expect(misses).toEqual([]);
  });
});

describe('a property lookup run', () => {
  it('matches full, spelled-out and partial addresses, one row per address in order, billing found properties only', async () => {
    const a = await property(`street like '% St' and cardinality(owner_phones) > 0`);
    const b = await property(`street like '% Ave' and zip <> '${a.zip}'`);
    const c = await property(
      `street like '% Blvd' and (select count(*) from property q where q.street = property.street and q.city = property.city) = 1`,
    );
    const spelled = `${a.street.replace(/ St$/, ' Street').toUpperCase()} , ${a.city.toLowerCase()},  ${US_STATES[a.state]}   ${a.zip}-4321`;
    const respelled = `${a.street.toLowerCase()} ${a.city} ${a.state.toLowerCase()} ${a.zip}`;
    const byZip = `${b.street.replace(/ Ave$/, ' Avenue')}, ${b.zip}`;
    const byCity = `${c.street.replace(/ Blvd$/, ' Boulevard')}, ${c.city}, ${c.state}`;
    const missing = '9999 Nowhere Ln, Denver, CO 80202';
    const sameAsA = `${a.street}, ${a.zip}`;

    const { start, status, rows } = await t.runTool(key, PATH, {
      addresses: [spelled, byZip, respelled, byCity, missing, sameAsA],
    });
    expect(start).toEqual({
      runId: expect.any(String),
      status: 'RUNNING',
      message: 'Looking up 5 addresses (1 repeated address skipped)',
      estimatedCost: 0.75,
    });
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 5, handled: 5 });
    expect(rows).toEqual([
      lookupRow(spelled, a, 'exact'),
      lookupRow(byZip, b, 'street_and_zip'),
      lookupRow(byCity, c, 'street_and_city'),
      emptyRow(missing, 'not_found', 'No property at this address in the catalog'),
      emptyRow(sameAsA, 'duplicate', `Same property as address 1 (${spelled}); returned and billed once`),
    ]);
    expect(Object.keys(rows[0])).toEqual(propertyLookupTool.columns.map((col) => col.key));
    expect(await run(start.runId)).toMatchObject({
      tool: 'property-lookup',
      charged: 3n * LOOKUP_MICROS,
      billed_units: 3,
      item_count: 5,
    });
    expect(start.ownerContactRunId).toBeUndefined();
  });

  it('downloads a CSV with the columns and histories as text', async () => {
    const a = await property(`listing_status = 'for_sale'`);
    const { start } = await t.runTool(key, PATH, { addresses: [full(a)], fileName: 'my homes' });
    const res = await t.request('GET', `/api/downloads/${start.runId}?format=csv`, { key });
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="my_homes.csv"');
    const [header, record] = parse(res.text) as string[][];
    expect(header).toEqual(propertyLookupTool.columns.map((col) => col.header));
    const cell = (name: string) => record![header!.indexOf(name)];
    expect(cell('status')).toBe('found');
    expect(cell('list_price')).toBe(String(a.list_price));
    expect(cell('price_history')).toBe((a.price_history as object[]).map((e) => JSON.stringify(e)).join('; '));
    expect(cell('schools')).toContain('"level":"elementary"');
  });

  it('tells apart units at one street address and several properties fitting a partial address', async () => {
    const sql = t.app.core.sql;
    const base = await property(
      `city = 'Denver' and (select count(*) from property q where q.street = property.street and q.city = 'Denver') = 1`,
    );
    const other = String(Number(base.zip) + 50);
    await sql`
      insert into property (address_key, street, city, state, zip) values
        (${'777 unit test st apt 1|denver|co|80202'}, '777 Unit Test St Apt 1', 'Denver', 'CO', '80202'),
        (${'777 unit test st apt 2|denver|co|80202'}, '777 Unit Test St Apt 2', 'Denver', 'CO', '80202'),
        (${`${base.street.toLowerCase()}|denver|co|${other}`}, ${base.street}, 'Denver', 'CO', ${other})`;
    const [unit2] = await sql`select id::int from property where street = '777 Unit Test St Apt 2'`;
    const addresses = [
      '777 Unit Test Street #2, Denver, CO 80202',
      '777 Unit Test St, Denver, CO 80202',
      `${base.street}, Denver, CO`,
      `${base.street}, Denver, CO ${other}`,
    ];
    const { rows, start } = await t.runTool(key, PATH, { addresses });
    expect(rows.map((r) => [r.status, r.match_type, r.street, r.zip, r.message])).toEqual([
      ['found', 'street_and_zip', '777 Unit Test St Apt 2', '80202', null],
      ['ambiguous', null, null, null, '2 properties match this address (add the unit number)'],
      [
        'ambiguous',
        null,
        null,
        null,
        `2 properties match this address (zip codes ${[base.zip, other].sort().join(', ')}; add the zip code)`,
      ],
      ['found', 'exact', base.street, other, null],
    ]);
    expect(unit2!.id).toBeGreaterThan(0);
    expect((await run(start.runId)).charged).toBe(2n * LOOKUP_MICROS);
  });

  it('is also accepted without the version segment', async () => {
    const a = await property(`true`);
    const { start, rows } = await t.runTool(key, '/api/scrape/property-lookup', { addresses: [full(a)] });
    expect(rows).toEqual([lookupRow(full(a), a, 'exact')]);
    expect(await run(start.runId)).toMatchObject({ tool: 'property-lookup', charged: LOOKUP_MICROS });
  });
});

describe('includeOwnerContact', () => {
  it('creates two linked runs, each billed on its own: 0.15 and 0.10 per property', async () => {
    const { accountId, apiKey } = await t.account({ creditsMicros: 10_000_000n });
    const a = await property(`cardinality(owner_phones) > 0 and cardinality(owner_emails) > 0`);
    const b = await property(`cardinality(owner_phones) > 0 and id > ${a.id}`);
    const silent = await property(`cardinality(owner_phones) = 0 and cardinality(owner_emails) = 0`);
    const missing = '1 Nowhere Ln, Austin, TX 78701';
    const addresses = [full(a), `${b.street}, ${b.zip}`, full(silent), missing];
    const before = await t.walletMicros(accountId);

    const started = await t.request('POST', '/api/scrape/property-lookup', {
      key: apiKey,
      body: { addresses, includeOwnerContact: true, fileName: 'owners' },
    });
    expect(started.status).toBe(200);
    expect(started.body).toEqual({
      runId: expect.any(String),
      status: 'RUNNING',
      message: 'Looking up 4 addresses; owner phones and emails come in a second run (ownerContactRunId)',
      estimatedCost: 0.6,
      ownerContactRunId: expect.any(String),
    });
    const { runId, ownerContactRunId } = started.body;
    expect(ownerContactRunId).not.toBe(runId);
    expect(await run(ownerContactRunId)).toMatchObject({
      tool: 'property-owner-contact',
      parent_run_id: runId,
      requested: 4,
      file_name: 'owners-owner-contact',
    });

    expect(await t.waitForRun(apiKey, runId)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await t.waitForRun(apiKey, ownerContactRunId)).toMatchObject({ status: 'SUCCEEDED' });
    const lookup = (
      await t.request<{ status: string }[]>('GET', `/api/downloads/${runId}?format=json`, { key: apiKey })
    ).body;
    expect(lookup.map((r) => r.status)).toEqual(['found', 'found', 'found', 'not_found']);
    expect(lookup[0]).not.toHaveProperty('owner_phones');

    const owners = (await t.request('GET', `/api/downloads/${ownerContactRunId}?format=json`, { key: apiKey })).body;
    const ownerRow = (input: string, p: CatalogProperty, matchType: string, message: string | null = null) => ({
      input_address: input,
      status: 'found',
      match_type: matchType,
      address: full(p),
      street: p.street,
      city: p.city,
      state: p.state,
      zip: p.zip,
      owner_name: p.owner_name,
      owner_mailing_address: p.owner_mailing_address,
      owner_phones: p.owner_phones,
      owner_emails: p.owner_emails,
      message,
    });
    expect(owners).toEqual([
      ownerRow(addresses[0]!, a, 'exact'),
      ownerRow(addresses[1]!, b, 'street_and_zip'),
      ownerRow(addresses[2]!, silent, 'exact', 'No phone or email is known for this owner; not billed'),
      {
        ...Object.fromEntries(propertyOwnerContactTool.columns.map((col) => [col.key, null])),
        input_address: missing,
        status: 'not_found',
        owner_phones: [],
        owner_emails: [],
        message: 'No property at this address in the catalog',
      },
    ]);
    expect(Object.keys(owners[0])).toEqual(propertyOwnerContactTool.columns.map((col) => col.key));

    const main = await run(runId);
    const owner = await run(ownerContactRunId);
    expect(main.charged).toBe(3n * LOOKUP_MICROS);
    expect(owner.charged).toBe(2n * OWNER_MICROS);
    expect(await t.walletMicros(accountId)).toBe(before - main.charged - owner.charged);
  });

  it('refuses both runs with 402 when the wallet cannot hold either', async () => {
    const a = await property(`true`);
    for (const credits of [LOOKUP_MICROS, OWNER_MICROS, 0n]) {
      const { accountId, apiKey } = await t.account({ creditsMicros: credits });
      const res = await t.request('POST', PATH, {
        key: apiKey,
        body: { addresses: [full(a)], includeOwnerContact: true },
      });
      expect(res.status, `credits ${credits}`).toBe(402);
      expect(res.body.error.code).toBe('insufficient_funds');
      const [runs] = await t.app.core.sql`select count(*)::int as n from run where account_id = ${accountId}`;
      expect(runs!.n).toBe(0);
      const [holds] = await t.app.core
        .sql`select count(*)::int as n from ledger_entry where account_id = ${accountId} and kind = 'hold'`;
      expect(holds!.n).toBe(0);
      expect(await t.walletMicros(accountId)).toBe(credits);
    }
    const { apiKey } = await t.account({ creditsMicros: LOOKUP_MICROS + OWNER_MICROS });
    const res = await t.request('POST', PATH, {
      key: apiKey,
      body: { addresses: [full(a)], includeOwnerContact: true },
    });
    expect(res.status).toBe(200);
    expect(res.body.ownerContactRunId).toEqual(expect.any(String));
  });

  it('is started through GraphQL too, the linked run in details', async () => {
    const a = await property(`true`);
    const Start = graphql(`
      mutation PropertyLookupStart($input: StartPropertyLookupInput!) {
        startPropertyLookup(input: $input) { run { id status } message estimatedCost ownerContactRunId }
      }
    `);
    const res = await t.graphql(key, Start, { input: { addresses: [full(a)], includeOwnerContact: true } });
    expect(res.body.errors).toBeUndefined();
    const started = res.body.data!.startPropertyLookup;
    expect(started).toMatchObject({
      run: { id: expect.any(String), status: 'RUNNING' },
      estimatedCost: '0.15',
      ownerContactRunId: expect.any(String),
    });
    expect(await run(started.ownerContactRunId!)).toMatchObject({
      tool: 'property-owner-contact',
      parent_run_id: started.run!.id,
    });
    await t.waitForRun(key, started.run!.id);
    await t.waitForRun(key, started.ownerContactRunId!);
    expect((await run(started.run!.id)).charged).toBe(LOOKUP_MICROS);
  });

  it('can be cancelled, both runs, keeping and billing what was stored', async () => {
    const { apiKey, accountId } = await t.account({ creditsMicros: 1_000_000_000n });
    const all = await t.app.core.sql`select street, city, state, zip from property order by id limit 1000`;
    const addresses = all.map((p) => `${p.street}, ${p.city}, ${p.state} ${p.zip}`);
    const held = holdLookups(accountId);
    try {
      const started = await t.request('POST', PATH, { key: apiKey, body: { addresses, includeOwnerContact: true } });
      expect(started.status).toBe(200);
      const runIds = [started.body.runId, started.body.ownerContactRunId];
      // Both runs have stored a batch and wait on their next read: each is cancelled mid-run.
      await held.held(2);
      for (const runId of runIds) {
        const cancel = await t.request('POST', `/api/v1/scrape/cancel/${runId}`, { key: apiKey });
        expect(cancel.status).toBe(200);
        expect(cancel.body.status).toBe('ABORTING');
      }
      held.release();
      for (const runId of runIds) expect(await t.waitForRun(apiKey, runId)).toMatchObject({ status: 'ABORTED' });
      const main = await run(started.body.runId);
      expect(main.item_count).toBeGreaterThan(0);
      expect(main.item_count).toBeLessThan(1000);
      expect(main.charged).toBe(BigInt(main.item_count) * LOOKUP_MICROS);
      const owner = await run(started.body.ownerContactRunId);
      expect(owner.item_count).toBeGreaterThan(0);
      expect(owner.item_count).toBeLessThan(1000);
      const [contacts] = await t.app.core.sql`
        select count(*)::int as n from run_item where run_id = ${started.body.ownerContactRunId}
          and (json_array_length(data->'owner_phones') > 0 or json_array_length(data->'owner_emails') > 0)`;
      expect(owner.charged).toBe(BigInt(contacts!.n) * OWNER_MICROS);
    } finally {
      held.release();
      held.restore();
    }
  });

  it('has no route or mutation of its own', async () => {
    expect(
      (
        await t.request('POST', '/api/v1/scrape/property-owner-contact', {
          key,
          body: { addresses: ['1 Main St, 80202'] },
        })
      ).status,
    ).toBe(404);
    // A string: the schema has no such mutation.
    const res = await t.graphql(
      key,
      `mutation { startPropertyOwnerContact(input: { addresses: ["1 Main St, 80202"] }) { message } }`,
    );
    expect(res.body.errors?.[0]?.message).toMatch(/startPropertyOwnerContact/);
  });
});

describe('bad input', () => {
  it.each([
    ['no addresses', {}, 'addresses'],
    ['an empty list', { addresses: [] }, 'addresses'],
    ['a string instead of a list', { addresses: '1234 Main St, Denver, CO 80202' }, 'addresses'],
    ['an address without a house number', { addresses: ['Main St, Denver, CO 80202'] }, 'addresses.0'],
    [
      'an address without city or zip',
      { addresses: ['1234 Main St, Denver, CO 80202', '1234 Main St'] },
      'addresses.1',
    ],
    [
      'a non-boolean includeOwnerContact',
      { addresses: ['1234 Main St, Denver, CO 80202'], includeOwnerContact: 'yes' },
      'includeOwnerContact',
    ],
    ['a long fileName', { addresses: ['1234 Main St, Denver, CO 80202'], fileName: 'x'.repeat(51) }, 'fileName'],
    ['1001 addresses', { addresses: Array.from({ length: 1001 }, (_, i) => `${i + 1} Main St, 80202`) }, 'addresses'],
  ])('%s is refused naming the field', async (_, body, path) => {
    const res = await t.request('POST', PATH, { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect([...new Set(res.body.error.details.map((d: { path: string }) => d.path))]).toEqual([path]);
  });

  it('says what an address lacks', async () => {
    const res = await t.request('POST', PATH, { key, body: { addresses: ['1234 Main St'] } });
    expect(res.body.error.details).toEqual([
      { path: 'addresses.0', message: 'needs a city and state or a zip code, e.g. "1234 Main St, Denver, CO 80202"' },
    ]);
  });
});
