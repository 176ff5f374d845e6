import type { Sql } from '../../../db/client.ts';

/** A company of the lead database, as a lead record shows it. */
export interface CompanyRecord {
  id: number;
  name: string;
  domain: string;
  industry: string | null;
  sizeBand: string | null;
  employeesCount: number | null;
  annualRevenue: number | null;
  city: string | null;
  state: string | null;
  country: string | null;
  keywords: string[];
  technologies: string[];
  founded: number | null;
  phone: string | null;
  linkedinUrl: string | null;
  twitterUrl: string | null;
  facebookUrl: string | null;
}

/** Companies by id, one query, for a page of leads (the GraphQL DataLoader batches the same call). */
export async function loadCompanies(sql: Sql, ids: readonly number[]): Promise<Map<number, CompanyRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<CompanyRecord[]>`
    select id::int, name, domain, industry, size_band as "sizeBand", employees_count as "employeesCount",
           annual_revenue::float8 as "annualRevenue", city, state, country, keywords, technologies, founded, phone,
           linkedin_url as "linkedinUrl", twitter_url as "twitterUrl", facebook_url as "facebookUrl"
    from company where id = any(${[...ids]}::bigint[])`;
  return new Map(rows.map((r) => [r.id, r]));
}

/** The distinct companies of a page of people (`company_id` as text, null without one). */
export const companyIdsOf = (rows: readonly { company_id: string | null }[]) => [
  ...new Set(
    rows
      .map((r) => r.company_id)
      .filter((id): id is string => id !== null)
      .map(Number),
  ),
];

/** False while the companies dataset is being prepared (an import is loading it). */
export async function companiesReady(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ ready: boolean }[]>`select ready from dataset_state where dataset = 'companies'`;
  return row?.ready ?? true;
}
