import { and, arrayOverlaps, asc, eq, gt, or, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Executor } from '../../../db/client.ts';
import { datasetStateTable } from '../../../db/tables/datasets.ts';
import { companyTable as company } from '../../../db/tables/leads.ts';
import { storeTable as store } from '../../../db/tables/stores.ts';
import { storeConditions } from '../stores/filters.ts';
import type { StoreFilter } from '../../sources/stores.ts';
import { drizzleTemplate as template } from '../sql.ts';
import type { NameKind, StoreSource, TechnologyUser } from '../../sources/stores.ts';

const where = (filter: StoreFilter, afterId?: number) =>
  and(...storeConditions(template, filter), afterId === undefined ? undefined : gt(store.id, afterId));

const NAME_QUERIES: Record<NameKind, { dataset: string; query: SQL }> = {
  storeTechnologies: {
    dataset: 'stores',
    query: sql`select distinct unnest(${store.technologies}) as name from ${store}`,
  },
  storeApps: { dataset: 'stores', query: sql`select distinct unnest(${store.apps}) as name from ${store}` },
  companyTechnologies: {
    dataset: 'companies',
    query: sql`select distinct unnest(${company.technologies}) as name from ${company}`,
  },
};

/** Which of the queried names a row's lists hold (a containment test per name is cheaper than unnesting the lists). */
const matchedNames = (checks: (readonly [AnyPgColumn, string])[]) =>
  sql<string[]>`array_remove(array[${sql.join(
    checks.map(([list, name]) => sql`case when ${list} @> ${sql.param([name])}::text[] then ${name}::text end`),
    sql`, `,
  )}]::text[], null)`;

/**
 * E-commerce stores with technologies and apps from the catalog tables;
 * technology users also from the lead database's companies.
 */
export function catalogStores(db: Executor): StoreSource {
  // Name lists take a scan of the table; they are kept until the dataset is imported again.
  const nameLists = new Map<NameKind, { version: string; names: Promise<string[]> }>();

  const datasetVersion = async (dataset: string) => {
    const [state] = await db
      .select({
        ready: datasetStateTable.ready,
        rowCount: datasetStateTable.rowCount,
        refreshedAt: datasetStateTable.refreshedAt,
      })
      .from(datasetStateTable)
      .where(eq(datasetStateTable.dataset, dataset));
    return state?.ready ? `${state.refreshedAt.getTime()}:${state.rowCount}` : null;
  };

  return {
    async searchStores({ filter, limit, afterId }) {
      return db
        .select({
          id: store.id,
          domain: store.domain,
          name: store.name,
          platform: store.platform,
          planTier: store.planTier,
          countryCode: store.countryCode,
          city: store.city,
          state: store.state,
          category: store.category,
          technologies: store.technologies,
          apps: store.apps,
          instagramUrl: store.instagramUrl,
          facebookUrl: store.facebookUrl,
          tiktokUrl: store.tiktokUrl,
          youtubeUrl: store.youtubeUrl,
          linkedinUrl: store.linkedinUrl,
          twitterUrl: store.twitterUrl,
          pinterestUrl: store.pinterestUrl,
          emails: store.emails,
          phones: store.phones,
          estimatedMonthlyVisits: store.estimatedMonthlyVisits,
          estimatedMonthlySales: store.estimatedMonthlySales,
          employeeCount: store.employeeCount,
        })
        .from(store)
        .where(where(filter, afterId))
        .orderBy(asc(store.id))
        .limit(limit);
    },

    async storeIdAt(filter, position) {
      const first = db
        .select({ id: store.id })
        .from(store)
        .where(where(filter))
        .orderBy(asc(store.id))
        .limit(position)
        .as('first');
      const [row] = await db
        .select({ n: sql<number>`count(*)::int`, last: sql<string | null>`max(${first.id})::text` })
        .from(first);
      return row && row.n === position && row.last !== null ? Number(row.last) : null;
    },

    async names(kind) {
      const { dataset, query } = NAME_QUERIES[kind];
      const version = await datasetVersion(dataset);
      const known = nameLists.get(kind);
      if (version !== null && known?.version === version) return known.names;
      const names = db.execute(query).then((rows) => (rows as unknown as { name: string }[]).map((r) => r.name));
      if (version !== null) {
        nameLists.set(kind, { version, names });
        names.catch(() => nameLists.delete(kind));
      }
      return names;
    },

    async technologyUsers({ dataset, technologies, apps, limit, afterId }): Promise<TechnologyUser[]> {
      if (dataset === 'stores') {
        if (technologies.length === 0 && apps.length === 0) return [];
        return db
          .select({
            id: store.id,
            domain: store.domain,
            name: store.name,
            platform: store.platform,
            category: store.category,
            countryCode: store.countryCode,
            country: sql<string | null>`null`,
            city: store.city,
            state: store.state,
            matched: matchedNames([
              ...technologies.map((name) => [store.technologies, name] as const),
              ...apps.map((name) => [store.apps, name] as const),
            ]),
          })
          .from(store)
          .where(
            and(
              or(
                technologies.length > 0 ? arrayOverlaps(store.technologies, technologies) : undefined,
                apps.length > 0 ? arrayOverlaps(store.apps, apps) : undefined,
              ),
              afterId === undefined ? undefined : gt(store.id, afterId),
            ),
          )
          .orderBy(asc(store.id))
          .limit(limit);
      }
      if (technologies.length === 0) return [];
      return db
        .select({
          id: company.id,
          domain: company.domain,
          name: company.name,
          platform: sql<string | null>`null`,
          category: company.industry,
          countryCode: sql<string | null>`null`,
          country: company.country,
          city: company.city,
          state: company.state,
          matched: matchedNames(technologies.map((name) => [company.technologies, name] as const)),
        })
        .from(company)
        .where(
          and(
            arrayOverlaps(company.technologies, technologies),
            afterId === undefined ? undefined : gt(company.id, afterId),
          ),
        )
        .orderBy(asc(company.id))
        .limit(limit);
    },
  };
}
