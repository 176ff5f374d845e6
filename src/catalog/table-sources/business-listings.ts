import { and, asc, eq, gt, gte, inArray, lte, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { businessListingTable as bl } from '../../../db/tables/business-listings.ts';
import type { BusinessListing, BusinessListingSource, DollarRange } from '../../sources/business-listings.ts';

const columns = {
  id: bl.id,
  listingUrl: bl.listingUrl,
  title: bl.title,
  category: bl.category,
  city: bl.city,
  state: bl.state,
  country: bl.country,
  askingPrice: bl.askingPrice,
  revenue: bl.revenue,
  ebitda: bl.ebitda,
  cashFlow: bl.cashFlow,
  established: bl.established,
  employees: bl.employees,
  description: bl.description,
  brokerName: bl.brokerName,
  brokerCompany: bl.brokerCompany,
  brokerPhone: bl.brokerPhone,
  brokerEmail: bl.brokerEmail,
  listedAt: bl.listedAt,
};

const within = (column: AnyColumn, range: DollarRange | undefined): SQL | undefined =>
  range
    ? and(
        range.min === undefined ? undefined : gte(column, range.min),
        range.max === undefined ? undefined : lte(column, range.max),
      )
    : undefined;

/** The link as given and its usual spellings (scheme, trailing slash), without query or fragment. */
function spellings(link: string): string[] {
  try {
    const url = new URL(link);
    const path = url.pathname.replace(/\/+$/, '');
    return ['https:', 'http:'].flatMap((scheme) => [`${scheme}//${url.host}${path}/`, `${scheme}//${url.host}${path}`]);
  } catch {
    return [];
  }
}

const listingIdOf = (listingUrl: string) => /\/(\d+)\/?$/.exec(listingUrl.replace(/[?#].*$/, ''))?.[1];

/** Business-for-sale listings from the catalog tables. */
export function catalogBusinessListings(db: Executor): BusinessListingSource {
  return {
    async searchListings(q) {
      return db
        .select(columns)
        .from(bl)
        .where(
          and(
            q.state ? eq(bl.state, q.state) : undefined,
            q.city ? sql`btrim(regexp_replace(lower(${bl.city}), '[^a-z0-9]+', ' ', 'g')) = ${q.city}` : undefined,
            q.industries
              ? inArray(
                  sql`lower(${bl.category})`,
                  q.industries.map((i) => i.toLowerCase()),
                )
              : undefined,
            within(bl.askingPrice, q.askingPrice),
            within(bl.cashFlow, q.cashFlow),
            within(bl.revenue, q.revenue),
            within(bl.ebitda, q.ebitda),
            q.afterId === undefined ? undefined : gt(bl.id, q.afterId),
          ),
        )
        .orderBy(asc(bl.id))
        .limit(q.limit);
    },

    async findListings(refs) {
      const found = new Map<string, BusinessListing>();
      const wanted = new Set(refs.map((r) => r.listingId));
      if (wanted.size === 0) return found;
      // Links pasted from the catalog's own site match on the unique index.
      const exact = await db
        .select(columns)
        .from(bl)
        .where(inArray(bl.listingUrl, [...new Set(refs.flatMap((r) => spellings(r.url)))]))
        .orderBy(asc(bl.id));
      for (const listing of exact) {
        const id = listingIdOf(listing.listingUrl);
        if (id && wanted.has(id) && !found.has(id)) found.set(id, listing);
      }
      // Other hosts or slugs: the listing id at the end of the path decides.
      const missing = [...wanted].filter((id) => !found.has(id));
      if (missing.length > 0) {
        // One pass over the links, comparing their last "/<id>" with every missing id of that length.
        const byLength = new Map<number, string[]>();
        for (const id of missing) byLength.set(id.length, [...(byLength.get(id.length) ?? []), `/${id}`]);
        const rest = await db
          .select(columns)
          .from(bl)
          .where(
            or(
              ...[...byLength].map(([length, tails]) =>
                inArray(sql`right(rtrim(${bl.listingUrl}, '/'), ${length + 1})`, tails),
              ),
            ),
          )
          .orderBy(asc(bl.id));
        for (const listing of rest) {
          const id = listingIdOf(listing.listingUrl);
          if (id && wanted.has(id) && !found.has(id)) found.set(id, listing);
        }
      }
      return found;
    },

    async industries() {
      // A skip scan over the lower(category) index: one probe per industry, not a pass over every listing.
      const rows = (await db.execute(sql`
        with recursive c(v) as (
          (select lower(category) from business_listing where lower(category) is not null
            order by lower(category) limit 1)
          union all
          select (select lower(category) from business_listing where lower(category) > c.v
            order by lower(category) limit 1) from c where c.v is not null
        )
        select (select category from business_listing where lower(category) = c.v limit 1) as name from c
          where c.v is not null`)) as unknown as {
        name: string;
      }[];
      return rows.map((r) => r.name);
    },
  };
}
