import type { Database, Executor, Sql } from '../../../db/client.ts';
import { companiesReady } from '../leads/companies.ts';
import { leadRecordPage } from '../leads/search.ts';
import type { ContactMatches, LeadRecord, LeadSource, PersonContact } from '../../sources/leads.ts';

type Keyed = PersonContact & { k: string };

function byKey(rows: readonly Keyed[]): Map<string, PersonContact> {
  return new Map(rows.map(({ k, ...person }) => [k, person]));
}

/** People and companies of the lead database from the catalog tables. */
export function catalogLeads(db: Executor): LeadSource {
  // The lead search is built with postgres.js fragments (catalog/leads/query.ts), so it runs on the pool itself.
  const sql: Sql = (db as Database).$client;

  const contactsBy = (column: 'email' | 'linkedin_url', keys: string[]) =>
    keys.length === 0
      ? Promise.resolve([] as Keyed[])
      : sql<Keyed[]>`
          select distinct on (lower(p.${sql(column)})) lower(p.${sql(column)}) as k,
                 p.id::int as id, p.first_name as "firstName", p.last_name as "lastName", p.title, p.email, p.mobile,
                 p.linkedin_url as "linkedinUrl", p.city, p.state, p.country, c.name as "companyName",
                 c.domain as "companyDomain"
          from person p left join company c on c.id = p.company_id
          where lower(p.${sql(column)}) = any(${keys}::text[])
          order by lower(p.${sql(column)}), p.mobile is null, p.id`;

  return {
    companyDataReady: () => companiesReady(sql),

    async searchLeads({ filters, limit, afterId }) {
      return (await leadRecordPage(sql, filters, {
        limit,
        afterId: afterId === undefined ? undefined : BigInt(afterId),
      })) as LeadRecord[];
    },

    async findContacts({ emails, socialUrls }): Promise<ContactMatches> {
      const [byEmail, bySocial] = await Promise.all([
        contactsBy('email', emails),
        contactsBy('linkedin_url', socialUrls),
      ]);
      return { byEmail: byKey(byEmail), bySocialUrl: byKey(bySocial) };
    },
  };
}
