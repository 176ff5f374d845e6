import { and, asc, desc, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { companyTable as c, personTable as p } from '../../../db/tables/leads.ts';
import type {
  CompanyProfile,
  ContactCatalog,
  ContactNetwork,
  ContactSource,
  DomainPerson,
} from '../../sources/contacts.ts';

const profileColumns = {
  domain: c.domain,
  name: c.name,
  industry: c.industry,
  sizeBand: c.sizeBand,
  employeesCount: c.employeesCount,
  founded: c.founded,
  city: c.city,
  state: c.state,
  country: c.country,
  linkedinUrl: c.linkedinUrl,
  twitterUrl: c.twitterUrl,
  facebookUrl: c.facebookUrl,
};

const PROFILE_SQL = sql.raw(
  'c.domain, c.name, c.industry, c.size_band as "sizeBand", ' +
    'c.employees_count as "employeesCount", c.founded, c.city, c.state, c.country, ' +
    'c.linkedin_url as "linkedinUrl", c.twitter_url as "twitterUrl", c.facebook_url as "facebookUrl"',
);

const personColumns = {
  firstName: p.firstName,
  lastName: p.lastName,
  title: p.title,
  email: p.email,
  emailStatus: p.emailStatus,
  linkedinUrl: p.linkedinUrl,
};

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** What the lead database knows about companies and their people, for the contact tools. */
export function catalogContactCatalog(db: Executor): ContactCatalog {
  return {
    async companiesByDomain(domains) {
      const wanted = [...new Set(domains.map((d) => d.toLowerCase()))];
      const found = new Map<string, CompanyProfile>();
      for (let i = 0; i < wanted.length; i += 1_000) {
        const rows = await db
          .select(profileColumns)
          .from(c)
          .where(inArray(c.domain, wanted.slice(i, i + 1_000)));
        for (const row of rows) found.set(row.domain, row);
      }
      return found;
    },

    async companiesByName(names) {
      const wanted = [...new Set(names.map((n) => n.trim()).filter(Boolean))];
      const found = new Map<string, CompanyProfile>();
      if (wanted.length === 0) return found;
      // Same name twice: the larger company, then the older row, so the answer is stable.
      const exact = (await db.execute(sql`
        select q.name as query, m.* from jsonb_array_elements_text(${JSON.stringify(wanted.map(escapeLike))}::jsonb)
          with ordinality as q(name, n)
        cross join lateral (
          select ${PROFILE_SQL} from company c where c.name ilike q.name
          order by c.employees_count desc nulls last, c.id limit 1
        ) m`)) as unknown as (CompanyProfile & { query: string })[];
      const byEscaped = new Map(wanted.map((n) => [escapeLike(n), n]));
      for (const { query, ...profile } of exact) {
        const name = byEscaped.get(query);
        if (name !== undefined) found.set(name, profile);
      }

      const rest = wanted.filter((n) => !found.has(n));
      if (rest.length > 0) {
        const similar = (await db.execute(sql`
          select q.name as query, m.* from jsonb_array_elements_text(${JSON.stringify(rest)}::jsonb) as q(name)
          cross join lateral (
            select ${PROFILE_SQL} from company c where c.name % q.name and similarity(c.name, q.name) >= 0.5
            order by similarity(c.name, q.name) desc, c.employees_count desc nulls last, c.id limit 1
          ) m`)) as unknown as (CompanyProfile & { query: string })[];
        for (const { query, ...profile } of similar) found.set(query, profile);
      }
      return found;
    },

    async peopleWithEmails(domains, perDomain) {
      const wanted = [...new Set(domains.map((d) => d.toLowerCase()))];
      const found = new Map<string, DomainPerson[]>();
      if (wanted.length === 0) return found;
      const rows = (await db.execute(sql`
        select c.domain, m.* from company c
        cross join lateral (
          select p.first_name as "firstName", p.last_name as "lastName", p.title, p.email,
            p.email_status as "emailStatus", p.linkedin_url as "linkedinUrl"
          from person p
          where p.company_id = c.id and lower(p.email) like ('%@' || c.domain)
          order by (p.email_status = 'verified') desc, p.id
          limit ${perDomain}
        ) m
        where c.domain in
          (select jsonb_array_elements_text(${JSON.stringify(wanted)}::jsonb))`)) as unknown as (DomainPerson & {
        domain: string;
      })[];
      for (const { domain, ...person } of rows) {
        const list = found.get(domain) ?? [];
        list.push(person);
        found.set(domain, list);
      }
      return found;
    },

    async peopleAtDomain(domain, limit) {
      return db
        .select(personColumns)
        .from(p)
        .innerJoin(c, eq(p.companyId, c.id))
        .where(and(eq(c.domain, domain.toLowerCase()), isNotNull(p.firstName)))
        .orderBy(desc(sql`${p.email} is not null`), asc(p.id))
        .limit(limit);
    },
  };
}

/**
 * The contact tools' source: the catalog, plus the network (DNS, SMTP, web behind the outbound guard);
 * without one, the default network settings are used (the core passes the configured one).
 */
export function catalogContacts(db: Executor, network: ContactNetwork): ContactSource {
  return { ...network, catalog: catalogContactCatalog(db) };
}
