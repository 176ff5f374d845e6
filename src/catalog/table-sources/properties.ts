import { and, asc, desc, eq, gte, inArray, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { propertyTable as p } from '../../../db/tables/properties.ts';
import type {
  AddressCandidateQuery,
  DealArea,
  PropertyAddress,
  PropertySelector,
  PropertySource,
} from '../../sources/properties.ts';

const addressColumns = {
  id: p.id,
  addressKey: p.addressKey,
  street: p.street,
  city: p.city,
  state: p.state,
  zip: p.zip,
};

function selected(select: PropertySelector): SQL | undefined {
  const keys = select.keys ?? [];
  const ids = select.ids ?? [];
  if (keys.length === 0 && ids.length === 0) return undefined;
  return or(keys.length > 0 ? inArray(p.addressKey, keys) : undefined, ids.length > 0 ? inArray(p.id, ids) : undefined);
}

/** LIKE pattern matching `text` literally at the start of a word-separated value. */
const prefixPattern = (text: string) => `${text.replace(/[\\%_]/g, (c) => `\\${c}`)} %`;

/**
 * The deal area. The city is compared as an expression no index covers, so the planner reads the
 * state's for-sale rows (property_status_idx, a tenth of the table) rather than every property of
 * the city (property_city_idx).
 */
function areaCondition(area: DealArea): SQL | undefined {
  return and(
    area.zip ? eq(p.zip, area.zip) : undefined,
    area.state ? eq(p.state, area.state) : undefined,
    area.city ? sql`lower(${p.city}) || '' = ${area.city.toLowerCase()}` : undefined,
  );
}

/** The deal's discount as an exact ratio; the order and the cursor both use it. */
const discount = sql<string>`((${p.estimatedValue} - ${p.listPrice})::numeric / ${p.estimatedValue})`;

/** Residential properties and their owners from the catalog tables. */
export function catalogProperties(db: Executor): PropertySource {
  return {
    async details(select) {
      const where = selected(select);
      if (!where) return [];
      return db
        .select({
          ...addressColumns,
          lat: p.lat,
          lng: p.lng,
          propertyType: p.propertyType,
          beds: p.beds,
          baths: p.baths,
          sqft: p.sqft,
          lotSqft: p.lotSqft,
          yearBuilt: p.yearBuilt,
          estimatedValue: p.estimatedValue,
          listingStatus: p.listingStatus,
          listPrice: p.listPrice,
          daysOnMarket: p.daysOnMarket,
          lastSoldDate: p.lastSoldDate,
          lastSoldPrice: p.lastSoldPrice,
          priceHistory: p.priceHistory,
          taxHistory: p.taxHistory,
          comparables: p.comparables,
          schools: p.schools,
          ownerName: p.ownerName,
          ownerMailingAddress: p.ownerMailingAddress,
        })
        .from(p)
        .where(where);
    },

    async ownerContacts(select) {
      const where = selected(select);
      if (!where) return [];
      return db
        .select({
          ...addressColumns,
          ownerName: p.ownerName,
          ownerMailingAddress: p.ownerMailingAddress,
          ownerPhones: p.ownerPhones,
          ownerEmails: p.ownerEmails,
        })
        .from(p)
        .where(where);
    },

    async addressCandidates(queries, limitEach) {
      const results: PropertyAddress[][] = queries.map(() => []);
      // One query per kind of area, each a lateral index lookup per address.
      const kinds: { where: SQL; pick: (q: AddressCandidateQuery) => boolean }[] = [
        { where: sql`p.zip = q.zip`, pick: (q) => !!q.zip },
        { where: sql`p.state = q.state and lower(p.city) = q.city`, pick: (q) => !q.zip && !!q.city && !!q.state },
        { where: sql`lower(p.city) = q.city`, pick: (q) => !q.zip && !!q.city && !q.state },
      ];
      for (const kind of kinds) {
        const picked = queries.flatMap((q, i) => (kind.pick(q) ? [{ q, i }] : []));
        if (picked.length === 0) continue;
        const rows = await db.execute<{
          n: number;
          id: string;
          address_key: string;
          street: string;
          city: string;
          state: string;
          zip: string;
        }>(sql`
          select q.n::int as n, p.id, p.address_key, p.street, p.city, p.state, p.zip
          from unnest(
            ${sql.param(picked.map(({ i }) => i))}::int[],
            ${sql.param(picked.map(({ q }) => prefixPattern(q.houseNumber)))}::text[],
            ${sql.param(picked.map(({ q }) => q.zip ?? null))}::text[],
            ${sql.param(picked.map(({ q }) => q.city ?? null))}::text[],
            ${sql.param(picked.map(({ q }) => q.state ?? null))}::text[]
          ) as q(n, pattern, zip, city, state)
          cross join lateral (
            select id, address_key, street, city, state, zip from ${p} p
            where ${kind.where} and p.street ilike q.pattern
            order by p.id
            limit ${limitEach}
          ) p
          order by q.n, p.id`);
        // n is the index of one of the queries sent: its list exists.
        for (const r of rows) {
          results[r.n]?.push({
            id: Number(r.id),
            addressKey: r.address_key,
            street: r.street,
            city: r.city,
            state: r.state,
            zip: r.zip,
          });
        }
      }
      return results;
    },

    async findDeals(query) {
      const rows = await db
        .select({
          ...addressColumns,
          lat: p.lat,
          lng: p.lng,
          propertyType: p.propertyType,
          beds: p.beds,
          baths: p.baths,
          sqft: p.sqft,
          yearBuilt: p.yearBuilt,
          listPrice: p.listPrice,
          estimatedValue: p.estimatedValue,
          discount: sql<string>`${discount}::text`,
          daysOnMarket: p.daysOnMarket,
          lastSoldDate: p.lastSoldDate,
          lastSoldPrice: p.lastSoldPrice,
        })
        .from(p)
        .where(
          and(
            eq(p.listingStatus, 'for_sale'),
            areaCondition(query.area),
            sql`${p.estimatedValue} > 0`,
            sql`${p.listPrice} * 100 <= ${p.estimatedValue} * (100 - ${query.minDiscountPercent}::numeric)`,
            query.minPrice === undefined ? undefined : gte(p.listPrice, query.minPrice),
            query.maxPrice === undefined ? undefined : lte(p.listPrice, query.maxPrice),
            query.propertyTypes?.length ? inArray(p.propertyType, query.propertyTypes) : undefined,
            query.minBeds === undefined ? undefined : gte(p.beds, query.minBeds),
            query.maxBeds === undefined ? undefined : lte(p.beds, query.maxBeds),
            query.after
              ? sql`(${discount} < ${query.after.discount}::numeric or (${discount} = ${query.after.discount}::numeric
                and ${p.id} > ${query.after.id}))`
              : undefined,
          ),
        )
        .orderBy(desc(discount), asc(p.id))
        .limit(query.limit);
      // The conditions above exclude rows without a list price or estimated value.
      return rows.filter(
        (row): row is typeof row & { listPrice: number; estimatedValue: number } =>
          row.listPrice !== null && row.estimatedValue !== null,
      );
    },
  };
}
