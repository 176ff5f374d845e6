import type { Database, Executor, Sql } from '../../../db/client.ts';
import { leadConditions, selectLeadPage, where } from '../../catalog/leads/query.ts';
import { leadRecord } from '../../catalog/leads/lead-record.ts';
import { companiesReady, loadCompanies } from '../../endpoints/lead-search.ts';
import type { ContactMatches, LeadRecord, LeadSource, PersonContact } from '../leads.ts';

type Keyed = PersonContact & { k: string };

function byKey(rows: readonly Keyed[]): Map<string, PersonContact> {
  return new Map(rows.map(({ k, ...person }) => [k, person]));
}

/** People and companies of the lead database from the catalog tables. */
export function catalogLeads(db: Executor): LeadSource {
  // The lead search is built with postgres.js fragments (services/leads/query.ts), so it runs on the pool itself.
  const sql: Sql = (db as Database).$client;

  const contactsBy = (column: 'email' | 'linkedin_url', keys: string[]) =>
    keys.length === 0
      ? Promise.resolve([] as Keyed[])
      : sql<Keyed[]>`
          select distinct on (lower(p.${sql(column)})) lower(p.${sql(column)}) as k,
                 p.id::int as id, p.first_name as "firstName", p.last_name as "lastName", p.title, p.email, p.mobile,
                 p.linkedin_url as "linkedinUrl", p.city, p.state, p.country, c.name as "companyName", c.domain as "companyDomain"
          from person p left join company c on c.id = p.company_id
          where lower(p.${sql(column)}) = any(${keys}::text[])
          order by lower(p.${sql(column)}), p.mobile is null, p.id`;

  return {
    companyDataReady: () => companiesReady(sql),

    async searchLeads({ filters, limit, afterId }) {
      const rows = await selectLeadPage(sql, where(sql, leadConditions(sql, filters)), {
        limit,
        afterId: afterId === undefined ? undefined : BigInt(afterId),
      });
      const page = rows.slice(0, limit);
      const companyIds = [...new Set(page.map((r) => r.company_id).filter((id): id is string => id !== null).map(Number))];
      const companies = await loadCompanies(sql, companyIds);
      return page.map((r) => leadRecord(r, r.company_id ? companies.get(Number(r.company_id)) : undefined) as LeadRecord);
    },

    async findContacts({ emails, socialUrls }): Promise<ContactMatches> {
      const [byEmail, bySocial] = await Promise.all([contactsBy('email', emails), contactsBy('linkedin_url', socialUrls)]);
      return { byEmail: byKey(byEmail), bySocialUrl: byKey(bySocial) };
    },
  };
}
