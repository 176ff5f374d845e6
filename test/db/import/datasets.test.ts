import { existsSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  copyIn,
  ImportAborted,
  ImportConnectionLost,
  ImportRejected,
  importFile,
  type ImportOptions,
  type ImportSummary,
} from '../../../db/import/index.ts';
import { importFixture, type ImportFixture } from '../../helpers/import.ts';
import { importSuppression } from '../../../src/privacy/imports.ts';

let f: ImportFixture;

beforeAll(async () => {
  f = await importFixture();
});
afterAll(() => f?.close());

const run = (options: Omit<ImportOptions, 'suppressed'>) =>
  importFile(f.sql, { suppressed: importSuppression, ...options });

function summary(dataset: string, counts: Partial<ImportSummary>): ImportSummary {
  return {
    dataset,
    rows: 0,
    inserted: 0,
    updated: 0,
    unchanged: 0,
    invalid: 0,
    duplicatesInFile: 0,
    suppressed: 0,
    ...counts,
  };
}

/** Runs an import expected to be refused and returns the rejection. */
async function refused(options: Omit<ImportOptions, 'suppressed'>): Promise<ImportRejected> {
  const err = await run(options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ImportRejected);
  return err as ImportRejected;
}

const COMPANIES_CSV = [
  'domain,name,industry,size_band,employees_count,annual_revenue,city,state,country,keywords,technologies,founded,phone,linkedin_url',
  'acme-import.test,Acme Import,Software,51-200,120,25000000,Denver,CO,United States,saas; b2b ; ,"[""React"",""Postgres; 16""]",1999,+1 303 555 0100,https://www.linkedin.com/company/acme-import',
  'globex-import.test,"Globex ""Import""',
  'Corporation",Energy,,5000,,Houston,TX,United States,,,1950,,',
  'initech-import.test,Initech,,,,,,,,,,,,',
  '',
].join('\n');

const PEOPLE_CSV = [
  'company_domain,first_name,last_name,title,seniority,department,email,email_status,linkedin_url,city,country',
  'acme-import.test,Ada,Lovelace,VP of Engineering,vp,engineering,Ada.Lovelace@Acme-Import.test,verified,https://www.linkedin.com/in/ada-import,Denver,United States',
  'globex-import.test,Grace,Hopper,,,,,,https://www.linkedin.com/in/Grace-Import,,',
  ',Alan,Turing,,,,alan@turing-import.test,guessed,,,',
].join('\r\n');

const PROPERTIES_NDJSON = [
  JSON.stringify({
    street: '12  Oak Ave ',
    city: 'Denver',
    state: 'CO',
    zip: '80202',
    lat: 39.74,
    lng: -104.99,
    property_type: 'single_family',
    beds: 3,
    baths: 2.5,
    sqft: 1800,
    year_built: 1998,
    estimated_value: 650000,
    listing_status: 'for_sale',
    list_price: 675000,
    days_on_market: 12,
    last_sold_date: '2015-06-30',
    last_sold_price: 410000,
    price_history: [{ date: '2015-06-30', event: 'Sold', price: 410000 }],
    tax_history: [{ year: 2024, tax: 7150, assessment: 585000 }],
    comparables: [],
    schools: [{ name: 'Oak Elementary', level: 'elementary', rating: 8, distanceMiles: 0.4 }],
    owner_name: 'Jane Roe',
    owner_phones: ['+1 303 555 0101'],
    owner_emails: ['jane@roe-import.test'],
  }),
  '',
  JSON.stringify({ street: '99 Pine St', city: 'Austin', state: 'TX', zip: '78701', owner_name: null }),
].join('\n');

describe('importFile: good files', () => {
  it('loads a good CSV file: exact counts, values, lists, defaults and resolved references', async () => {
    const companies = await f.write('companies.csv', COMPANIES_CSV);
    const result = await run({ dataset: 'companies', file: companies });
    expect(result).toEqual({
      summary: summary('companies', { rows: 3, inserted: 3 }),
      errors: [],
      errorsFile: undefined,
    });
    expect(existsSync(`${companies}.errors.csv`)).toBe(false);

    const rows = await f.sql`
      select domain, name, industry, size_band, employees_count, annual_revenue, city, keywords, technologies, founded, phone, linkedin_url, twitter_url
      from company where domain like '%-import.test' order by domain`;
    expect(rows).toEqual([
      {
        domain: 'acme-import.test',
        name: 'Acme Import',
        industry: 'Software',
        size_band: '51-200',
        employees_count: 120,
        annual_revenue: '25000000',
        city: 'Denver',
        keywords: ['saas', 'b2b'],
        technologies: ['React', 'Postgres; 16'],
        founded: 1999,
        phone: '+1 303 555 0100',
        linkedin_url: 'https://www.linkedin.com/company/acme-import',
        twitter_url: null,
      },
      {
        domain: 'globex-import.test',
        name: 'Globex "Import"\nCorporation',
        industry: 'Energy',
        size_band: null,
        employees_count: 5000,
        annual_revenue: null,
        city: 'Houston',
        keywords: [],
        technologies: [],
        founded: 1950,
        phone: null,
        linkedin_url: null,
        twitter_url: null,
      },
      {
        domain: 'initech-import.test',
        name: 'Initech',
        industry: null,
        size_band: null,
        employees_count: null,
        annual_revenue: null,
        city: null,
        keywords: [],
        technologies: [],
        founded: null,
        phone: null,
        linkedin_url: null,
        twitter_url: null,
      },
    ]);

    const people = await f.write('people.csv', PEOPLE_CSV);
    expect((await run({ dataset: 'people', file: people })).summary).toEqual(
      summary('people', { rows: 3, inserted: 3 }),
    );
    const persons = await f.sql`
      select p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status, p.linkedin_url, p.person_key, c.domain
      from person p left join company c on c.id = p.company_id
      where p.person_key in ('ada.lovelace@acme-import.test', 'https://www.linkedin.com/in/grace-import', 'alan@turing-import.test')
      order by p.first_name`;
    expect(persons).toEqual([
      {
        first_name: 'Ada',
        last_name: 'Lovelace',
        title: 'VP of Engineering',
        seniority: 'vp',
        department: 'engineering',
        email: 'Ada.Lovelace@Acme-Import.test',
        email_status: 'verified',
        linkedin_url: 'https://www.linkedin.com/in/ada-import',
        person_key: 'ada.lovelace@acme-import.test',
        domain: 'acme-import.test',
      },
      {
        first_name: 'Alan',
        last_name: 'Turing',
        title: null,
        seniority: null,
        department: null,
        email: 'alan@turing-import.test',
        email_status: 'guessed',
        linkedin_url: null,
        person_key: 'alan@turing-import.test',
        domain: null,
      },
      {
        first_name: 'Grace',
        last_name: 'Hopper',
        title: null,
        seniority: null,
        department: null,
        email: null,
        email_status: null,
        linkedin_url: 'https://www.linkedin.com/in/Grace-Import',
        person_key: 'https://www.linkedin.com/in/grace-import',
        domain: 'globex-import.test',
      },
    ]);

    const counts =
      await f.sql`select (select count(*)::int from company) as companies, (select count(*)::int from person) as people`;
    expect(await f.state('companies')).toEqual({ ready: true, row_count: counts[0]!.companies });
    expect(await f.state('people')).toEqual({ ready: true, row_count: counts[0]!.people });
  });

  it('loads booleans, dates, lists and required references from CSV', async () => {
    const businesses = await f.write(
      'local_businesses.csv',
      [
        'place_id,name,category,street,city,state,postal_code,lat,lng,website,emails,rating,review_count,opening_hours',
        'ChIJimport0001,Summit Dental,Dentist,1 Main St,Denver,CO,80202,39.7392,-104.9903,https://summit-import.test,info@summit-import.test; hello@summit-import.test,4.5,12,Monday: 9 AM–5 PM; Tuesday: Closed',
        'ChIJimport0002,Pine Bakery,Bakery,,Austin,TX,,30.2672,-97.7431,,,,,',
      ].join('\n'),
    );
    expect((await run({ dataset: 'local_businesses', file: businesses })).summary).toEqual(
      summary('local_businesses', { rows: 2, inserted: 2 }),
    );
    expect(
      await f.sql`select place_id, country_code, lat, lng, emails, rating, review_count, opening_hours, street from local_business where place_id like 'ChIJimport%' order by place_id`,
    ).toEqual([
      {
        place_id: 'ChIJimport0001',
        country_code: 'US',
        lat: 39.7392,
        lng: -104.9903,
        emails: ['info@summit-import.test', 'hello@summit-import.test'],
        rating: 4.5,
        review_count: 12,
        opening_hours: ['Monday: 9 AM–5 PM', 'Tuesday: Closed'],
        street: '1 Main St',
      },
      {
        place_id: 'ChIJimport0002',
        country_code: 'US',
        lat: 30.2672,
        lng: -97.7431,
        emails: [],
        rating: null,
        review_count: 0,
        opening_hours: null,
        street: null,
      },
    ]);

    const reviews = await f.write(
      'reviews.csv',
      [
        'review_key,place_id,author,rating,text,published_at',
        'ChIJimport0001-1,ChIJimport0001,Jo B.,5,"Great, friendly",2024-02-29',
        'ChIJimport0001-2,ChIJimport0001,Sam K.,3,,2023-12-31',
        'ChIJimport0002-1,ChIJimport0002,Lee M.,4,Fresh bread,2025-01-15',
      ].join('\n'),
    );
    expect((await run({ dataset: 'local_business_reviews', file: reviews })).summary).toEqual(
      summary('local_business_reviews', { rows: 3, inserted: 3 }),
    );
    expect(
      await f.sql`select r.review_key, b.place_id, r.author, r.rating, r.text, r.published_at::text
        from local_business_review r join local_business b on b.id = r.business_id where r.review_key like 'ChIJimport%' order by r.review_key`,
    ).toEqual([
      {
        review_key: 'ChIJimport0001-1',
        place_id: 'ChIJimport0001',
        author: 'Jo B.',
        rating: 5,
        text: 'Great, friendly',
        published_at: '2024-02-29',
      },
      {
        review_key: 'ChIJimport0001-2',
        place_id: 'ChIJimport0001',
        author: 'Sam K.',
        rating: 3,
        text: null,
        published_at: '2023-12-31',
      },
      {
        review_key: 'ChIJimport0002-1',
        place_id: 'ChIJimport0002',
        author: 'Lee M.',
        rating: 4,
        text: 'Fresh bread',
        published_at: '2025-01-15',
      },
    ]);

    const pros = await f.write(
      'pros.csv',
      [
        'profile_url,name,category,grade,city,state,zip,hours,licensed,insured,service_zips,rating',
        'https://pros-import.test/plumbing/flow-1,Flow Plumbing,plumbing,A,Denver,CO,80202,Monday: 8 AM–6 PM,yes,1,80202; 80203,4.8',
        'https://pros-import.test/roofing/top-2,Top Roofing,roofing,,Austin,TX,78701,,NO,false,,',
        'https://pros-import.test/hvac/cool-3,Cool HVAC,hvac,F,Austin,TX,78702,,True,0,,',
      ].join('\n'),
    );
    expect((await run({ dataset: 'home_service_pros', file: pros })).summary).toEqual(
      summary('home_service_pros', { rows: 3, inserted: 3 }),
    );
    expect(
      await f.sql`select name, grade, hours, licensed, insured, service_zips, rating, review_count from home_service_pro where profile_url like 'https://pros-import.test/%' order by name`,
    ).toEqual([
      {
        name: 'Cool HVAC',
        grade: 'F',
        hours: [],
        licensed: true,
        insured: false,
        service_zips: [],
        rating: null,
        review_count: 0,
      },
      {
        name: 'Flow Plumbing',
        grade: 'A',
        hours: ['Monday: 8 AM–6 PM'],
        licensed: true,
        insured: true,
        service_zips: ['80202', '80203'],
        rating: 4.8,
        review_count: 0,
      },
      {
        name: 'Top Roofing',
        grade: null,
        hours: [],
        licensed: false,
        insured: false,
        service_zips: [],
        rating: null,
        review_count: 0,
      },
    ]);
  });

  it('loads a good NDJSON file: jsonb, dates, numerics, booleans, the computed key and references', async () => {
    const properties = await f.write('properties.ndjson', PROPERTIES_NDJSON);
    expect((await run({ dataset: 'properties', file: properties })).summary).toEqual(
      summary('properties', { rows: 2, inserted: 2 }),
    );
    expect(
      await f.sql`select address_key, street, beds, baths, sqft, last_sold_date::text, price_history, tax_history, comparables, schools, owner_name, owner_phones, owner_emails, lat
        from property where address_key in ('12 oak ave|denver|co|80202', '99 pine st|austin|tx|78701') order by address_key`,
    ).toEqual([
      {
        address_key: '12 oak ave|denver|co|80202',
        street: '12  Oak Ave ',
        beds: 3,
        baths: 2.5,
        sqft: 1800,
        last_sold_date: '2015-06-30',
        price_history: [{ date: '2015-06-30', event: 'Sold', price: 410000 }],
        tax_history: [{ year: 2024, tax: 7150, assessment: 585000 }],
        comparables: [],
        schools: [{ name: 'Oak Elementary', level: 'elementary', rating: 8, distanceMiles: 0.4 }],
        owner_name: 'Jane Roe',
        owner_phones: ['+1 303 555 0101'],
        owner_emails: ['jane@roe-import.test'],
        lat: 39.74,
      },
      {
        address_key: '99 pine st|austin|tx|78701',
        street: '99 Pine St',
        beds: null,
        baths: null,
        sqft: null,
        last_sold_date: null,
        price_history: [],
        tax_history: [],
        comparables: [],
        schools: [],
        owner_name: null,
        owner_phones: [],
        owner_emails: [],
        lat: null,
      },
    ]);

    const hosts = await f.write(
      'hosts.ndjson',
      [
        JSON.stringify({
          host_key: 'https://stay-import.test/users/1',
          name: 'Marta',
          email: 'marta@stay-import.test',
          is_pro: true,
          is_superhost: false,
          listings_count: 3,
          joined_year: 2016,
        }),
        JSON.stringify({ host_key: 'https://stay-import.test/users/2', name: 'Luc', is_superhost: true }),
        '',
      ].join('\n'),
    );
    expect((await run({ dataset: 'rental_hosts', file: hosts })).summary).toEqual(
      summary('rental_hosts', { rows: 2, inserted: 2 }),
    );
    expect(
      await f.sql`select host_key, name, email, is_pro, is_superhost, listings_count, joined_year from rental_host where host_key like 'https://stay-import.test/%' order by host_key`,
    ).toEqual([
      {
        host_key: 'https://stay-import.test/users/1',
        name: 'Marta',
        email: 'marta@stay-import.test',
        is_pro: true,
        is_superhost: false,
        listings_count: 3,
        joined_year: 2016,
      },
      {
        host_key: 'https://stay-import.test/users/2',
        name: 'Luc',
        email: null,
        is_pro: false,
        is_superhost: true,
        listings_count: 1,
        joined_year: null,
      },
    ]);

    const listings = await f.write(
      'listings.jsonl',
      [
        JSON.stringify({
          listing_url: 'https://stay-import.test/rooms/10',
          host_key: 'https://stay-import.test/users/1',
          title: 'Loft in Lisbon',
          city: 'Lisbon',
          country: 'Portugal',
          country_code: 'PT',
          price_per_night: 129.5,
          amenities: ['Wifi', 'Kitchen'],
          bedrooms: 1,
          guests: 2,
          rating: 4.9,
          review_count: 87,
        }),
        JSON.stringify({
          listing_url: 'https://stay-import.test/rooms/11',
          host_key: 'https://stay-import.test/users/2',
          title: 'Room in Paris',
          city: 'Paris',
          country: 'France',
          country_code: 'FR',
          currency: 'EUR',
        }),
      ].join('\n'),
    );
    expect((await run({ dataset: 'rental_listings', file: listings })).summary).toEqual(
      summary('rental_listings', { rows: 2, inserted: 2 }),
    );
    expect(
      await f.sql`select l.listing_url, h.host_key, l.price_per_night::text, l.currency, l.amenities, l.rating, l.review_count
        from rental_listing l join rental_host h on h.id = l.host_id where l.listing_url like 'https://stay-import.test/%' order by l.listing_url`,
    ).toEqual([
      {
        listing_url: 'https://stay-import.test/rooms/10',
        host_key: 'https://stay-import.test/users/1',
        price_per_night: '129.50',
        currency: 'EUR',
        amenities: ['Wifi', 'Kitchen'],
        rating: 4.9,
        review_count: 87,
      },
      {
        listing_url: 'https://stay-import.test/rooms/11',
        host_key: 'https://stay-import.test/users/2',
        price_per_night: null,
        currency: 'EUR',
        amenities: [],
        rating: null,
        review_count: 0,
      },
    ]);
  });
});

describe('importFile: upserts', () => {
  it('importing the same file twice changes nothing', async () => {
    for (const [dataset, name, text, table, rows] of [
      ['companies', 'companies.csv', COMPANIES_CSV, 'company', 3],
      ['people', 'people.csv', PEOPLE_CSV, 'person', 3],
      ['properties', 'properties.ndjson', PROPERTIES_NDJSON, 'property', 2],
    ] as const) {
      const file = await f.write(name, text);
      const before = await f.checksum(table);
      expect((await run({ dataset, file })).summary).toEqual(summary(dataset, { rows, unchanged: rows }));
      expect(await f.checksum(table)).toEqual(before);
    }
  });

  it('a changed row is updated, the others stay unchanged', async () => {
    const file = await f.write('companies-changed.csv', COMPANIES_CSV.replace(',Energy,', ',Utilities,'));
    expect((await run({ dataset: 'companies', file })).summary).toEqual(
      summary('companies', { rows: 3, updated: 1, unchanged: 2 }),
    );
    expect(await f.sql`select industry from company where domain = 'globex-import.test'`).toEqual([
      { industry: 'Utilities' },
    ]);
  });

  it('new rows of a later import get their ids in file order, whatever order the references join in', async () => {
    const file = await f.write(
      'people-order.csv',
      [
        'company_domain,first_name,last_name,email',
        'initech-import.test,Ida,First,ida.first@order-import.test',
        'globex-import.test,Gus,Second,gus.second@order-import.test',
        'acme-import.test,Abe,Third,abe.third@order-import.test',
        ',Nia,Fourth,nia.fourth@order-import.test',
        'initech-import.test,Ivo,Fifth,ivo.fifth@order-import.test',
      ].join('\n'),
    );
    expect((await run({ dataset: 'people', file })).summary).toEqual(summary('people', { rows: 5, inserted: 5 }));
    const rows = await f.sql<
      { first_name: string }[]
    >`select first_name from person where email like '%@order-import.test' order by id`;
    expect(rows.map((r) => r.first_name)).toEqual(['Ida', 'Gus', 'Abe', 'Nia', 'Ivo']);
  });

  it('several rows with one natural key: the last wins, the others count as duplicatesInFile', async () => {
    const companies = await f.write(
      'companies-dupes.csv',
      [
        'domain,name',
        'dupe-import.test,First',
        'other-import.test,Other',
        'dupe-import.test,Second',
        'dupe-import.test,Third',
      ].join('\n'),
    );
    expect((await run({ dataset: 'companies', file: companies })).summary).toEqual(
      summary('companies', { rows: 4, inserted: 2, duplicatesInFile: 2 }),
    );
    expect(await f.sql`select name from company where domain = 'dupe-import.test'`).toEqual([{ name: 'Third' }]);

    const people = await f.write(
      'people-dupes.ndjson',
      [
        JSON.stringify({ first_name: 'Dee', last_name: 'One', email: 'Dee@Dupes-Import.test' }),
        JSON.stringify({ first_name: 'Dee', last_name: 'Two', email: 'dee@dupes-import.test' }),
      ].join('\n'),
    );
    expect((await run({ dataset: 'people', file: people })).summary).toEqual(
      summary('people', { rows: 2, inserted: 1, duplicatesInFile: 1 }),
    );
    expect(await f.sql`select last_name, email from person where person_key = 'dee@dupes-import.test'`).toEqual([
      { last_name: 'Two', email: 'dee@dupes-import.test' },
    ]);
  });
});

const BAD_COMPANIES_CSV = [
  'domain,name,employees_count,founded,keywords,linkedin_url',
  'good-bad-import.test,Good,10,2001,a; b,',
  '"multi-bad-import.test","Multi',
  'Line",5,,,',
  'Bad Domain,X,10,,,',
  'nofounded-bad-import.test,Y,ten,20001,,',
  'noname-bad-import.test,,,,,',
  'short-bad-import.test,Short',
  'list-bad-import.test,L,,,"[""ok"", 3]",ftp://x',
  '',
].join('\n');

const BAD_COMPANIES_ERRORS = [
  { line: 5, reason: 'domain: "Bad Domain" is not a lower-case host name such as acme.com' },
  {
    line: 6,
    reason: 'employees_count: expected a whole number, got "ten"; founded: 20001 is not between 1000 and 2100',
  },
  { line: 7, reason: 'name: required' },
  { line: 8, reason: 'expected 6 fields, found 2' },
  {
    line: 9,
    reason: 'keywords: expected a list of strings, got an item 3; linkedin_url: "ftp://x" is not an http(s) URL',
  },
];

const BAD_HOSTS_NDJSON = [
  JSON.stringify({ host_key: 'https://stay-import.test/users/9', name: 'Ok' }),
  '{"host_key":"https://stay-import.test/users/10","name":"Broken"',
  '   ',
  '["not","an","object"]',
  JSON.stringify({
    host_key: 'https://stay-import.test/users/11',
    name: 7,
    is_pro: 'yes',
    listings_count: 2.5,
    nickname: 'x',
  }),
  JSON.stringify({ host_key: 'not a url', name: 'N' }),
  JSON.stringify({ name: 'No key', joined_year: '2020' }),
].join('\n');

describe('importFile: bad rows', () => {
  it('refuses a bad CSV file: every bad row reported by line and reason, errors file written, nothing loaded', async () => {
    const file = await f.write('companies-bad.csv', BAD_COMPANIES_CSV);
    const before = await f.checksum('company');
    const crlf = await f.write('companies-bad-crlf.csv', BAD_COMPANIES_CSV.replaceAll('\n', '\r\n'));
    expect((await refused({ dataset: 'companies', file: crlf })).errors).toEqual(BAD_COMPANIES_ERRORS);
    const err = await refused({ dataset: 'companies', file });
    expect(err.errors).toEqual(BAD_COMPANIES_ERRORS);
    expect(err.summary).toEqual(summary('companies', { rows: 7, invalid: 5 }));
    expect(err.errorsFile).toBe(`${file}.errors.csv`);
    expect(err.message).toBe(`5 invalid rows; nothing was loaded (see ${file}.errors.csv)`);
    expect(await f.errorsIn(`${file}.errors.csv`)).toEqual(
      BAD_COMPANIES_ERRORS.map((e) => ({ line: String(e.line), reason: e.reason })),
    );
    expect(await f.checksum('company')).toEqual(before);
    expect(await f.state('companies')).toEqual({ ready: true, row_count: before.rows });
  });

  it('refuses a bad NDJSON file, reporting each line', async () => {
    const file = await f.write('hosts-bad.ndjson', BAD_HOSTS_NDJSON);
    const before = await f.checksum('rental_host');
    const errorsFile = `${f.dir}/hosts-bad-rows.csv`;
    const err = await refused({ dataset: 'rental_hosts', file, errorsFile });
    expect(err.errors).toEqual([
      { line: 2, reason: expect.stringMatching(/^not valid JSON \(.+\)$/) },
      { line: 4, reason: 'expected a JSON object' },
      {
        line: 5,
        reason:
          'unknown columns: nickname; name: expected a string, got 7; is_pro: expected true or false, got "yes"; listings_count: expected a whole number, got 2.5',
      },
      { line: 6, reason: 'host_key: "not a url" is not an http(s) URL' },
      { line: 7, reason: 'host_key: required; joined_year: expected a whole number, got "2020"' },
    ]);
    expect(err.summary).toEqual(summary('rental_hosts', { rows: 6, invalid: 5 }));
    expect((await f.errorsIn(errorsFile)).map((e) => e.line)).toEqual(['2', '4', '5', '6', '7']);
    expect(await f.checksum('rental_host')).toEqual(before);
  });

  it('with skipInvalid loads the good rows and still reports the bad ones', async () => {
    const file = await f.write('companies-bad.csv', BAD_COMPANIES_CSV);
    const result = await run({ dataset: 'companies', file, skipInvalid: true });
    expect(result.summary).toEqual(summary('companies', { rows: 7, inserted: 2, invalid: 5 }));
    expect(result.errors).toEqual(BAD_COMPANIES_ERRORS);
    expect(result.errorsFile).toBe(`${file}.errors.csv`);
    expect(await f.errorsIn(`${file}.errors.csv`)).toHaveLength(5);
    expect(
      await f.sql`select domain, name, keywords from company where domain like '%-bad-import.test' order by domain`,
    ).toEqual([
      { domain: 'good-bad-import.test', name: 'Good', keywords: ['a', 'b'] },
      { domain: 'multi-bad-import.test', name: 'Multi\nLine', keywords: [] },
    ]);

    const hosts = await f.write('hosts-bad.ndjson', BAD_HOSTS_NDJSON);
    expect((await run({ dataset: 'rental_hosts', file: hosts, skipInvalid: true })).summary).toEqual(
      summary('rental_hosts', { rows: 6, inserted: 1, invalid: 5 }),
    );

    const clean = await f.write('companies-bad.csv', 'domain,name\ngood-bad-import.test,Good\n');
    await run({ dataset: 'companies', file: clean });
    expect(existsSync(`${clean}.errors.csv`)).toBe(false);
  });

  it('refuses unknown, duplicate and missing columns once, before any row, even with skipInvalid', async () => {
    const before = await f.checksum('company');
    const header = await f.write('companies-header.csv', 'domain,nmae,founded,extra\nbad domain,x,soon,1\n');
    for (const skipInvalid of [false, true]) {
      const err = await refused({ dataset: 'companies', file: header, skipInvalid });
      expect(err.errors).toEqual([{ line: 1, reason: 'unknown columns: nmae, extra; missing required columns: name' }]);
      expect(err.summary).toEqual(summary('companies', {}));
      expect(await f.errorsIn(`${header}.errors.csv`)).toEqual([
        { line: '1', reason: 'unknown columns: nmae, extra; missing required columns: name' },
      ]);
    }
    const duplicated = await f.write('companies-duplicated.csv', 'domain,name,name\n');
    expect((await refused({ dataset: 'companies', file: duplicated })).errors).toEqual([
      { line: 1, reason: 'duplicate columns: name' },
    ]);
    const people = await f.write('people-header.csv', 'first_name,last_name,phone\nA,B,1\n');
    expect((await refused({ dataset: 'people', file: people })).errors).toEqual([
      { line: 1, reason: 'missing columns: one of email, linkedin_url is required' },
    ]);
    const empty = await f.write('empty.csv', '');
    expect((await refused({ dataset: 'companies', file: empty })).errors).toEqual([
      { line: 1, reason: 'the file is empty: a header row is required' },
    ]);
    const malformed = await f.write('malformed.csv', 'domain,name\nq-import.test,A\nq2-import.test,"B"x\n');
    expect((await refused({ dataset: 'companies', file: malformed })).errors).toEqual([
      { line: 3, reason: expect.stringMatching(/^malformed CSV: Invalid Closing Quote/) },
    ]);
    expect(await f.checksum('company')).toEqual(before);

    const headerOnly = await f.write('header-only.csv', 'domain,name\n');
    expect((await run({ dataset: 'companies', file: headerOnly })).summary).toEqual(summary('companies', {}));
  });

  it('unknown references are bad rows, found before anything is applied', async () => {
    const before = await f.checksum('person');
    const people = await f.write(
      'people-refs.csv',
      [
        'company_domain,first_name,last_name,email',
        'acme-import.test,Known,Ref,known-ref@acme-import.test',
        'nowhere-import.test,Unknown,Ref,unknown-ref@acme-import.test',
        'acme-import.test,Early,Row,same-key@acme-import.test',
        'nowhere-import.test,Late,Row,same-key@acme-import.test',
      ].join('\n'),
    );
    const err = await refused({ dataset: 'people', file: people });
    expect(err.errors).toEqual([
      { line: 3, reason: 'company_domain: no company has domain "nowhere-import.test"' },
      { line: 5, reason: 'company_domain: no company has domain "nowhere-import.test"' },
    ]);
    expect(err.summary).toEqual(summary('people', { rows: 4, invalid: 2 }));
    expect(await f.checksum('person')).toEqual(before);

    const result = await run({ dataset: 'people', file: people, skipInvalid: true });
    expect(result.summary).toEqual(summary('people', { rows: 4, inserted: 2, invalid: 2 }));
    expect(await f.sql`select first_name from person where person_key = 'same-key@acme-import.test'`).toEqual([
      { first_name: 'Early' },
    ]);

    const reviews = await f.write(
      'reviews-refs.csv',
      'review_key,place_id,author,rating,published_at\nr-import-9,ChIJnowhere,Al,4,2024-01-01\nr-import-10,ChIJimport0001,Bo,6,2024-13-01\n',
    );
    expect((await refused({ dataset: 'local_business_reviews', file: reviews })).errors).toEqual([
      { line: 2, reason: 'place_id: no local_business has place_id "ChIJnowhere"' },
      {
        line: 3,
        reason: 'rating: 6 is not between 1 and 5; published_at: expected a date as YYYY-MM-DD, got "2024-13-01"',
      },
    ]);
    const listings = await f.write(
      'listings-refs.ndjson',
      JSON.stringify({
        listing_url: 'https://stay-import.test/rooms/99',
        host_key: 'https://stay-import.test/users/404',
        title: 'T',
        city: 'Rome',
        country: 'Italy',
        country_code: 'IT',
      }),
    );
    expect((await refused({ dataset: 'rental_listings', file: listings })).errors).toEqual([
      { line: 1, reason: 'host_key: no rental_host has host_key "https://stay-import.test/users/404"' },
    ]);
  });
});

describe('importFile: failures leave the dataset as it was', () => {
  const indexes = () =>
    f.sql`select indexname, indexdef from pg_indexes where tablename = 'company' order by indexname`;

  it('a failure after the rows are applied rolls everything back; dataset_state is ready again', async () => {
    const file = await f.write(
      'companies-fail.csv',
      ['domain,name', 'fail-one-import.test,One', 'acme-import.test,Acme Renamed'].join('\n'),
    );
    const before = await f.checksum('company');
    const indexesBefore = await indexes();
    for (const rebuildIndexes of [false, true]) {
      let seen: unknown;
      const err = await run({
        dataset: 'companies',
        file,
        rebuildIndexes,
        beforeCommit: async (tx) => {
          const [inside] =
            await tx`select count(*)::int as n from company where domain = 'fail-one-import.test' or name = 'Acme Renamed'`;
          seen = { inside: inside!.n, state: await f.state('companies') };
          throw new Error('injected failure');
        },
      }).catch((e: Error) => e);
      expect((err as Error).message).toBe('injected failure');
      expect(seen).toEqual({ inside: 2, state: { ready: false, row_count: before.rows } });
      expect(await f.checksum('company')).toEqual(before);
      expect(await indexes()).toEqual(indexesBefore);
      expect(await f.state('companies')).toEqual({ ready: true, row_count: before.rows });
    }
  });

  it('rebuilding the secondary indexes gives the same indexes and rows', async () => {
    const indexesBefore = await indexes();
    expect(indexesBefore.length).toBeGreaterThan(2);
    const file = await f.write(
      'companies-rebuild.csv',
      ['domain,name,industry', 'rebuild-import.test,Rebuild,Tools', 'acme-import.test,Acme Import,Software'].join('\n'),
    );
    const result = await run({ dataset: 'companies', file, rebuildIndexes: true });
    expect(result.summary).toEqual(summary('companies', { rows: 2, inserted: 1, updated: 1 }));
    expect(await indexes()).toEqual(indexesBefore);
    expect(await f.sql`select domain from company where lower(industry) = 'tools'`).toEqual([
      { domain: 'rebuild-import.test' },
    ]);
  });

  it('an aborted import loads nothing', async () => {
    const file = await f.write('companies-abort.csv', 'domain,name\nabort-import.test,Abort\n');
    const before = await f.checksum('company');
    const controller = new AbortController();
    const err = await run({
      dataset: 'companies',
      file,
      signal: controller.signal,
      beforeCommit: () => controller.abort(),
    }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(ImportAborted);
    expect(await f.checksum('company')).toEqual(before);
    expect(await f.state('companies')).toEqual({ ready: true, row_count: before.rows });
  });

  it('an import that stalls inside its transaction is ended by the database: locks let go, nothing loaded', async () => {
    const file = await f.write('companies-stall.csv', 'domain,name\nstall-import.test,Stall\n');
    const before = await f.checksum('company');
    const err = await run({
      dataset: 'companies',
      file,
      idleLimitMs: 200,
      beforeCommit: () => new Promise((resolve) => setTimeout(resolve, 1_000)),
    }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(ImportConnectionLost);
    expect((err as Error).message).toBe(
      "the database ended the import's session (connection lost, or idle for more than 0.2 s); nothing was loaded",
    );
    expect(await f.checksum('company')).toEqual(before);
    expect(await f.state('companies')).toEqual({ ready: true, row_count: before.rows });
    expect((await run({ dataset: 'companies', file })).summary).toEqual(summary('companies', { rows: 1, inserted: 1 }));
  });

  it('a second import of a dataset is refused while one runs', async () => {
    const file = await f.write('companies-lock.csv', 'domain,name\nlock-import.test,Lock\n');
    let second: unknown;
    await run({
      dataset: 'companies',
      file,
      beforeCommit: async () => {
        second = await run({ dataset: 'companies', file }).catch((e: Error) => e.message);
      },
    });
    expect(second).toBe('another import of companies is running');
    expect((await run({ dataset: 'companies', file })).summary).toEqual(
      summary('companies', { rows: 1, unchanged: 1 }),
    );
  });

  it('a COPY the database refuses ends in an error, not a hang, and the transaction rolls back', async () => {
    const err = await f.sql
      .begin(async (tx) => {
        await tx`create temporary table refused_copy (n integer) on commit drop`;
        await pipeline(
          Readable.from(['1\n', 'not a number\n', '3\n']),
          await copyIn(tx, 'copy refused_copy from stdin'),
        );
      })
      .catch((e: Error) => e);
    expect((err as Error).message).toBe('the database refused the rows copied into the staging table');
    expect(
      await f.sql`select count(*)::int as n from pg_stat_activity where state = 'idle in transaction (aborted)' and datname = current_database()`,
    ).toEqual([{ n: 0 }]);
  });

  it('refuses unknown datasets, missing files and unknown formats before touching the database', async () => {
    await expect(run({ dataset: 'planets', file: 'x.csv' })).rejects.toThrow(
      'unknown dataset "planets"; expected one of companies, people,',
    );
    await expect(run({ dataset: 'companies', file: `${f.dir}/missing.csv` })).rejects.toThrow(
      `cannot read ${f.dir}/missing.csv: no such file`,
    );
    await expect(run({ dataset: 'companies', file: `${f.dir}/companies.txt` })).rejects.toThrow(
      'cannot tell the format',
    );
  });
});
