import type { Sql } from '../../../db/client.ts';
import { contactRankSql, personByEmailSql } from '../../../db/tables/leads.ts';
import type { LeadRow } from './query.ts';
import type { CompanyRecord } from './companies.ts';

/*
 * The lookups of lead enrichment (endpoints/enrich-leads.ts): every person a request's keys find, with
 * their company, in at most five queries whatever the number of rows. The matching rules (which key
 * wins, the output row) stay in enrich-leads.ts.
 */

/**
 * What a row of lead enrichment is matched on, in order of priority. `name` (a person's full name at a
 * company) is asked for by the console and GraphQL only (enrich-leads.ts); REST keeps the spec's four.
 */
export const MATCH_KEYS = ['email', 'social', 'mobile', 'name', 'domain'] as const;
export type MatchKey = (typeof MATCH_KEYS)[number];

/**
 * A row's normalised match keys: a lower-cased email, a social URL in the stored form
 * (normaliseSocialUrl), a mobile's last 10 digits, a bare company domain (bareHost).
 */
export interface Keys {
  email?: string;
  social?: string;
  mobile?: string;
  /** A full name at a company, as `nameKey` writes it. */
  name?: string;
  domain?: string;
}

/**
 * The key of a full name at a company: the company (`d:` and its domain, or `c:` and its name as an
 * ILIKE pattern matching it whatever the case), a tab, then the name in lower case with single spaces.
 */
export function nameKey(fullName: string, company: { domain: string } | { name: string }): string {
  const name = fullName.trim().toLowerCase().replace(/\s+/g, ' ');
  const at = 'domain' in company ? `d:${company.domain}` : `c:${company.name.trim().replace(/[\\%_]/g, '\\$&')}`;
  return `${at}\t${name}`;
}

const PERSON_COLUMNS =
  'p.id, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, ' +
  'p.email_status, p.phone, p.mobile, p.linkedin_url, p.city, p.state, p.country, p.company_id';

/**
 * The person's company in the same row (all null without one): the fields of `CompanyRecord`. Its two
 * lists come as JSON, which postgres.js decodes with JSON.parse, faster (and with less garbage) than
 * with its own array parser.
 */
const COMPANY_COLUMNS = `c.name, c.domain, c.industry, c.size_band, c.employees_count, c.annual_revenue::float8,
  c.city, c.state, c.country, to_json(c.keywords), to_json(c.technologies), c.founded, c.phone,
  c.linkedin_url, c.twitter_url, c.facebook_url`;

/**
 * A lookup row as postgres.js `values()` gives it: the key it was found by, the person, then the
 * person's company. An array rather than an object with 32 named fields (which V8 keeps as a
 * dictionary): about a third less memory to build and collect per row, which counts for 1,000 rows.
 */
export type Found = [
  k: string,
  id: string,
  first_name: string,
  last_name: string,
  title: string | null,
  seniority: string | null,
  department: string | null,
  email: string | null,
  email_status: string | null,
  phone: string | null,
  mobile: string | null,
  linkedin_url: string | null,
  city: string | null,
  state: string | null,
  country: string | null,
  company_id: string | null,
  /** Null without a company (the column is not null). */
  c_name: string | null,
  c_domain: string,
  c_industry: string | null,
  c_size_band: string | null,
  c_employees_count: number | null,
  c_annual_revenue: number | null,
  c_city: string | null,
  c_state: string | null,
  c_country: string | null,
  c_keywords: string[],
  c_technologies: string[],
  c_founded: number | null,
  c_phone: string | null,
  c_linkedin_url: string | null,
  c_twitter_url: string | null,
  c_facebook_url: string | null,
];

export const personOf = (f: Found): LeadRow => ({
  id: f[1],
  first_name: f[2],
  last_name: f[3],
  title: f[4],
  seniority: f[5],
  department: f[6],
  email: f[7],
  email_status: f[8],
  phone: f[9],
  mobile: f[10],
  linkedin_url: f[11],
  city: f[12],
  state: f[13],
  country: f[14],
  company_id: f[15],
});

export const companyOf = (f: Found): CompanyRecord | undefined =>
  f[16] === null
    ? undefined
    : {
        id: Number(f[15]),
        name: f[16],
        domain: f[17],
        industry: f[18],
        sizeBand: f[19],
        employeesCount: f[20],
        annualRevenue: f[21],
        city: f[22],
        state: f[23],
        country: f[24],
        keywords: f[25],
        technologies: f[26],
        founded: f[27],
        phone: f[28],
        linkedinUrl: f[29],
        twitterUrl: f[30],
        facebookUrl: f[31],
      };

/**
 * One query per match kind, each given every distinct key of the request as one array, with the
 * person's company joined. Each key is looked up in the index on its expression and returned as sent
 * (the expression is not computed again per row). An email is found through the person's unique key
 * (personByEmailSql), so it names one person at most; several people may share a social URL or a
 * mobile, and the one with the lowest id is kept (in JavaScript: without an ORDER BY, rows are sent as
 * they are found, and decoded while the other lookups still run).
 */
const PERSON_NAMED = `lower(p.first_name || ' ' || p.last_name) = split_part(k.k, chr(9), 2)`;
const LOOKUPS: Record<MatchKey | 'nameAtCompany', string> = {
  email: `select k.k, ${PERSON_COLUMNS}, ${COMPANY_COLUMNS}
    from unnest($1::text[]) k join person p on ${personByEmailSql('p.', 'k.k')}
    left join company c on c.id = p.company_id`,
  social: `select k.k, ${PERSON_COLUMNS}, ${COMPANY_COLUMNS}
    from unnest($1::text[]) k join person p on lower(p.linkedin_url) = k.k left join company c on c.id = p.company_id`,
  mobile: `select k.k, ${PERSON_COLUMNS}, ${COMPANY_COLUMNS}
    from unnest($1::text[]) k join person p on right(regexp_replace(p.mobile, '\\D', '', 'g'), 10) = k.k
    left join company c on c.id = p.company_id`,
  // A person by full name at a company domain, or at a company of that name (the trigram index on the name).
  name: `select k.k, ${PERSON_COLUMNS}, ${COMPANY_COLUMNS}
    from unnest($1::text[]) k join company c on c.domain = substr(split_part(k.k, chr(9), 1), 3)
    join person p on p.company_id = c.id and ${PERSON_NAMED}`,
  nameAtCompany: `select k.k, ${PERSON_COLUMNS}, ${COMPANY_COLUMNS}
    from unnest($1::text[]) k join company c on c.name ilike substr(split_part(k.k, chr(9), 1), 3)
    join person p on p.company_id = c.id and ${PERSON_NAMED}`,
  // The most senior person at each domain (contactRankSql; lowest id first within a rank): one probe
  // of person_company_idx, which carries the rank, per company.
  domain: `select c.domain as k, ${PERSON_COLUMNS}, ${COMPANY_COLUMNS}
    from company c cross join lateral (
      select ${PERSON_COLUMNS} from person p where p.company_id = c.id
      order by ${contactRankSql('p.')}, p.id
      limit 1) p
    where c.domain = any($1::text[])`,
};

/**
 * Every lookup of a request in at most seven queries, whatever the number of rows: the person found
 * (with their company) by each key. The queries only read (each sees committed data, so no
 * transaction is needed) and run at once on the pool, on separate connections, prepared (their plans,
 * index scans for an array of keys, do not depend on the values). A domain is looked up beside the
 * others only for rows that have nothing else; the domains of rows whose email, social URL or mobile
 * found nobody follow in a fifth query, so no one is looked up for a row matched already.
 */
export async function lookUpLeads(sql: Sql, keys: Keys[]): Promise<Record<MatchKey, Map<string, Found>>> {
  const found: Record<MatchKey, Map<string, Found>> = {
    email: new Map(),
    social: new Map(),
    mobile: new Map(),
    name: new Map(),
    domain: new Map(),
  };
  const distinct = (kind: MatchKey, of: Keys[]) => [
    ...new Set(of.map((k) => k[kind]).filter((v): v is string => v !== undefined)),
  ];
  const run = async (kind: MatchKey, values: string[], lookup: keyof typeof LOOKUPS = kind) => {
    if (values.length === 0) return;
    const byKey = found[kind];
    const rows = (await sql
      .unsafe(LOOKUPS[lookup], [values] as never, { prepare: true })
      .values()) as unknown as Found[];
    for (const row of rows) {
      const kept = byKey.get(row[0]);
      if (kept === undefined || Number(row[1]) < Number(kept[1])) byKey.set(row[0], row);
    }
  };
  const domainOnly = distinct(
    'domain',
    keys.filter((k) => k.email === undefined && k.social === undefined && k.mobile === undefined && !k.name),
  );
  const names = distinct('name', keys);
  await Promise.all([
    run('email', distinct('email', keys)),
    run('social', distinct('social', keys)),
    run('mobile', distinct('mobile', keys)),
    run(
      'name',
      names.filter((n) => n.startsWith('d:')),
    ),
    run(
      'name',
      names.filter((n) => n.startsWith('c:')),
      'nameAtCompany',
    ),
    run('domain', domainOnly),
  ]);
  const asked = new Set(domainOnly);
  const unmatched = keys.filter(
    (k) =>
      k.domain !== undefined &&
      !asked.has(k.domain) &&
      !(k.email !== undefined && found.email.has(k.email)) &&
      !(k.social !== undefined && found.social.has(k.social)) &&
      !(k.mobile !== undefined && found.mobile.has(k.mobile)) &&
      !(k.name !== undefined && found.name.has(k.name)),
  );
  await run('domain', distinct('domain', unmatched));
  return found;
}
