import type { Database, Executor, Sql } from '../../../db/client.ts';
import { US_STATES } from '../../shared/geo.ts';
import { stateVariants } from '../leads/vocabulary.ts';
import { streetVariants } from '../people/address.ts';
import type { PersonName } from '../../sources/people.ts';
import type { PersonPage, PersonPageQuery, PersonQuery, PersonRecord, PersonSource } from '../../sources/people.ts';

type Fragment = ReturnType<Sql>;

/** Owner names that are companies, trusts and the like: not persons. */
const ENTITY_WORDS =
  'llc|inc|corp|corporation|company|ltd|lp|llp|trust|holdings|properties|partners|partnership|bank|group';
const ENTITY_OWNER = String.raw`\m(${ENTITY_WORDS})\M`;
const US_COUNTRY = ['united states', 'us', 'usa', 'united states of america'];

const regexEscape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const likeEscape = (text: string) => text.replace(/[\\%_]/g, '\\$&');

/** A regex over an owner name (lower case, no periods or commas, single spaces) for the searched name. */
function ownerNamePattern(name: PersonName): string {
  const first = regexEscape(name.first);
  const last = regexEscape(name.last);
  let middle = String.raw`( \S+)*`;
  if (name.middle?.length === 1) middle = `( ${regexEscape(name.middle)}\\S*)?`;
  else if (name.middle) middle = `( (${regexEscape(name.middle)}|${regexEscape(name.middle.charAt(0))}))?`;
  return `^${first}${middle} ${last}( (jr|sr|ii|iii|iv|v))?$`;
}

const and = (sql: Sql, [first, ...rest]: Fragment[]): Fragment =>
  first ? rest.reduce((acc, p) => sql`${acc} and ${p}`, first) : sql`true`;

/**
 * Where a property owner is: the property (street, city, state, zip
 * columns) or the mailing address ("street, City, ST zip").
 */
function ownerLocation(sql: Sql, q: PersonQuery): Fragment | undefined {
  if (!q.street && !q.city && !q.state && !q.zip) return undefined;
  const streets = q.street ? streetVariants(q.street) : [];
  const property: Fragment[] = [];
  const mailing: Fragment[] = [];
  if (q.street) {
    property.push(sql`lower(p.street) = any(${streets}::text[])`);
    mailing.push(sql`lower(p.owner_mailing_address) like any(${streets.map((s) => `${likeEscape(s)},%`)}::text[])`);
  }
  if (q.city) {
    property.push(sql`lower(p.city) = ${q.city.toLowerCase()}`);
    mailing.push(sql`lower(p.owner_mailing_address) like ${`%, ${likeEscape(q.city.toLowerCase())}, %`}`);
  }
  if (q.state) {
    property.push(sql`p.state = ${q.state}`);
    mailing.push(sql`p.owner_mailing_address ~ ${`, ${q.state}( \\d{5}(-\\d{4})?)?$`}`);
  }
  if (q.zip) {
    property.push(sql`p.zip = ${q.zip}`);
    mailing.push(sql`p.owner_mailing_address ~ ${` ${q.zip}(-\\d{4})?$`}`);
  }
  return sql`((${and(sql, property)}) or (${and(sql, mailing)}))`;
}

/**
 * Conditions on a property row, cheapest first: LIKE filters narrow the rows before any regular
 * expression runs (the table has no index on owner names, phones or emails).
 */
function ownerConditions(sql: Sql, q: PersonQuery): Fragment[] {
  const c: Fragment[] = [sql`p.owner_name is not null`];
  if (q.name) {
    c.push(
      sql`lower(p.owner_name) like ${`${likeEscape(q.name.first)} %`}`,
      sql`lower(p.owner_name) like ${`%${likeEscape(q.name.last)}%`}`,
    );
  }
  if (q.phone)
    c.push(sql`(',' || translate(array_to_string(p.owner_phones, ','), '+-(). ', '') || ',') like ${`%${q.phone},%`}`);
  if (q.email)
    c.push(sql`(',' || lower(array_to_string(p.owner_emails, ',')) || ',') like ${`%,${likeEscape(q.email)},%`}`);
  const location = ownerLocation(sql, q);
  if (location) c.push(location);
  if (q.name)
    c.push(
      sql`regexp_replace(regexp_replace(lower(p.owner_name), '[.,]', '', 'g'), '\\s+', ' ', 'g')
        ~ ${ownerNamePattern(q.name)}`,
    );
  return c;
}

interface OwnerRow {
  id: string;
  owner_name: string;
  mailing: string;
  holdings: { address: string; phones: string[]; emails: string[] }[];
  relatives: string[];
}

const MAILING = /^(.+?), ([^,]+), ([A-Z]{2}) (\d{5})(?:-\d{4})?$/;

function pushUnique(list: string[], values: string[], key: (v: string) => string = (v) => v.toLowerCase()) {
  for (const v of values) if (v && !list.some((x) => key(x) === key(v))) list.push(v);
}

const lastTen = (phone: string) => phone.replace(/\D/g, '').slice(-10);

function ownerRecord(row: OwnerRow): PersonRecord {
  const tokens = row.owner_name.trim().split(/\s+/);
  const parts = MAILING.exec(row.mailing);
  const owned = row.holdings.map((h) => h.address);
  const addresses: string[] = [];
  pushUnique(addresses, [row.mailing, ...owned]);
  const phones: string[] = [];
  const emails: string[] = [];
  for (const h of row.holdings) {
    pushUnique(phones, h.phones, lastTen);
    pushUnique(emails, h.emails);
  }
  return {
    personId: `owner-${row.id}`,
    source: 'property_records',
    fullName: tokens.join(' '),
    firstName: tokens[0] ?? '',
    middleName: tokens.length > 2 ? tokens.slice(1, -1).join(' ') : null,
    lastName: tokens.at(-1) ?? '',
    address: row.mailing || null,
    street: parts?.[1] ?? null,
    city: parts?.[2] ?? null,
    state: parts?.[3] ?? null,
    zip: parts?.[4] ?? null,
    addresses,
    ownedProperties: owned,
    phones,
    emails,
    relatives: row.relatives,
    employer: null,
    jobTitle: null,
  };
}

interface LeadRow {
  id: string;
  first_name: string;
  last_name: string;
  email: string | null;
  mobile: string | null;
  city: string | null;
  state: string | null;
  title: string | null;
  employer: string | null;
}

function leadRecord(row: LeadRow): PersonRecord {
  const address = [row.city, row.state].filter(Boolean).join(', ') || null;
  return {
    personId: `lead-${row.id}`,
    source: 'lead_database',
    fullName: `${row.first_name} ${row.last_name}`,
    firstName: row.first_name,
    middleName: null,
    lastName: row.last_name,
    address,
    street: null,
    city: row.city,
    state: row.state,
    zip: null,
    addresses: address ? [address] : [],
    ownedProperties: [],
    phones: row.mobile ? [row.mobile] : [],
    emails: row.email ? [row.email] : [],
    relatives: [],
    employer: row.employer,
    jobTitle: row.title,
  };
}

/**
 * Consumer records from the catalog tables: first property owners (one person per owner name and
 * mailing address, with every property they own), then people of the lead database. Cursors are
 * "owner:<id>" and "lead:<id>" (keyset on the smallest property id, then on the person id).
 */
export function catalogPeople(db: Executor): PersonSource {
  const sql: Sql = (db as Database).$client;

  async function owners(q: PersonQuery, afterId: number, limit: number): Promise<PersonRecord[]> {
    const rows = await sql<OwnerRow[]>`
      with matched as materialized (
        select distinct p.owner_name, coalesce(p.owner_mailing_address, '') as mailing
        from property p
        where ${and(sql, ownerConditions(sql, q))}
      ),
      page as (
        select p.owner_name, m.mailing, min(p.id) as id,
               jsonb_agg(jsonb_build_object(
                 'address', p.street || ', ' || p.city || ', ' || p.state || ' ' || p.zip,
                 'phones', p.owner_phones, 'emails', p.owner_emails) order by p.id) as holdings
        from property p
        join matched m on p.owner_name = m.owner_name and coalesce(p.owner_mailing_address, '') = m.mailing
        where m.owner_name !~* ${ENTITY_OWNER}
        group by p.owner_name, m.mailing
        having min(p.id) > ${afterId}
        order by min(p.id)
        limit ${limit}
      ),
      kin as (
        -- Joined on the mailing address alone; the name rules run on the few rows that share it.
        select g.id, array_agg(distinct r.owner_name order by r.owner_name) filter (
                 where lower(r.owner_name) <> lower(g.owner_name)
                   and lower(substring(r.owner_name from '(\\S+)\\s*$'))
                     = lower(substring(g.owner_name from '(\\S+)\\s*$'))
                   and r.owner_name !~* ${ENTITY_OWNER}) as relatives
        from page g
        join property r on lower(r.owner_mailing_address) = lower(g.mailing)
        where g.mailing <> ''
        group by g.id
      )
      select g.id::text as id, g.owner_name, g.mailing, g.holdings, coalesce(k.relatives, '{}') as relatives
      from page g left join kin k on k.id = g.id
      order by g.id`;
    return rows.map(ownerRecord);
  }

  async function leads(q: PersonQuery, afterId: number, limit: number): Promise<PersonRecord[]> {
    const c: Fragment[] = [sql`p.id > ${afterId}`];
    if (q.name) c.push(sql`lower(p.first_name) = ${q.name.first}`, sql`lower(p.last_name) = ${q.name.last}`);
    if (q.state || q.city) c.push(sql`lower(p.country) = any(${US_COUNTRY}::text[])`);
    if (q.state) c.push(sql`lower(p.state) = any(${stateVariants(US_STATES[q.state] ?? q.state)}::text[])`);
    if (q.city) c.push(sql`lower(p.city) = ${q.city.toLowerCase()}`);
    // person_location_idx, person_mobile_idx and person_key (an email is its key: personByEmailSql); office
    // lines are shared by colleagues and are not matched.
    if (q.phone) c.push(sql`right(regexp_replace(p.mobile, '\\D', '', 'g'), 10) = ${q.phone}`);
    if (q.email) c.push(sql`p.person_key = ${q.email}`, sql`p.email is not null`);
    const rows = await sql<LeadRow[]>`
      select p.id::text as id, p.first_name, p.last_name, p.email, p.mobile, p.city, p.state, p.title,
        c.name as employer
      from person p left join company c on c.id = p.company_id
      where ${and(sql, c)}
      order by p.id
      limit ${limit}`;
    return rows.map(leadRecord);
  }

  return {
    async searchPeople(query: PersonPageQuery): Promise<PersonPage> {
      const { limit, after, ...q } = query;
      const cursor = /^(owner|lead):(\d+)$/.exec(after ?? '') ?? ['', 'owner', '0'];
      const phase = cursor[1] as 'owner' | 'lead';
      const afterId = Number(cursor[2]);
      // The lead database has no street or ZIP code: such searches read property owners only.
      const leadsApply = !q.street && !q.zip;
      if (phase === 'owner') {
        const people = await owners(q, afterId, limit);
        const last = people.at(-1);
        if (last && people.length === limit) return { people, next: `owner:${last.personId.slice('owner-'.length)}` };
        return { people, next: leadsApply ? 'lead:0' : null };
      }
      const people = await leads(q, afterId, limit);
      const last = people.at(-1);
      return { people, next: last && people.length === limit ? `lead:${last.personId.slice('lead-'.length)}` : null };
    },
  };
}
