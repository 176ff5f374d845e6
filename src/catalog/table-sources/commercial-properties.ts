import { and, asc, eq, gt, gte, ilike, inArray, lte, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { commercialPropertyTable as cp } from '../../../db/tables/commercial-properties.ts';
import type { CommercialPropertySource, NumberRange } from '../../sources/commercial-properties.ts';

const within = (column: AnyColumn, range: NumberRange | undefined): SQL | undefined =>
  range
    ? and(
        range.min === undefined ? undefined : gte(column, range.min),
        range.max === undefined ? undefined : lte(column, range.max),
      )
    : undefined;

const contains = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const cityWords = sql`btrim(regexp_replace(lower(${cp.city}), '[^a-z0-9]+', ' ', 'g'))`;

/** Commercial properties and their brokers from the catalog tables. */
export function catalogCommercialProperties(db: Executor): CommercialPropertySource {
  return {
    async searchProperties(q) {
      const licence = q.brokerLicence?.toUpperCase().replace(/[^A-Z0-9]/g, '');
      return db
        .select({
          id: cp.id,
          listingUrl: cp.listingUrl,
          title: cp.title,
          propertyType: cp.propertyType,
          listingType: cp.listingType,
          street: cp.street,
          city: cp.city,
          state: cp.state,
          zip: cp.zip,
          market: cp.market,
          lat: cp.lat,
          lng: cp.lng,
          price: cp.price,
          sizeSqft: cp.sizeSqft,
          brokerName: cp.brokerName,
          brokerCompany: cp.brokerCompany,
          brokerPhone: cp.brokerPhone,
          brokerEmail: cp.brokerEmail,
          brokerLicence: cp.brokerLicence,
        })
        .from(cp)
        .where(
          and(
            q.state ? eq(cp.state, q.state) : undefined,
            q.city ? sql`${cityWords} = ${q.city}` : undefined,
            q.market ? sql`lower(${cp.market}) = ${q.market}` : undefined,
            q.place ? or(sql`lower(${cp.market}) = ${q.place}`, sql`${cityWords} = ${q.place}`) : undefined,
            q.zip ? eq(cp.zip, q.zip) : undefined,
            q.propertyTypes?.length ? inArray(cp.propertyType, q.propertyTypes) : undefined,
            q.listingType ? eq(cp.listingType, q.listingType) : undefined,
            within(cp.price, q.price),
            within(cp.sizeSqft, q.sizeSqft),
            q.brokerName ? ilike(cp.brokerName, contains(q.brokerName)) : undefined,
            q.brokerCompany ? ilike(cp.brokerCompany, contains(q.brokerCompany)) : undefined,
            licence
              ? sql`regexp_replace(upper(${cp.brokerLicence}), '[^A-Z0-9]', '', 'g') like ${contains(licence)}`
              : undefined,
            q.afterId === undefined ? undefined : gt(cp.id, q.afterId),
          ),
        )
        .orderBy(asc(cp.id))
        .limit(q.limit);
    },
  };
}
