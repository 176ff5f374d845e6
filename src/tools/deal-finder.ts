import { z } from 'zod';
import { parsePlace } from '../shared/geo.ts';
import { usdAmount } from '../shared/amounts.ts';
import { formatAddress } from './lib/properties/lookup.ts';
import type { Deal, DealArea } from '../sources/properties.ts';
import { perResult } from '../billing/pricing.ts';
import { cell, defineTool, type Row } from './types.ts';

const PAGE_SIZE = 200;
const READ_SIZE = 2_000;
export const PROPERTY_TYPES = ['single_family', 'condo', 'townhouse', 'multi_family', 'mobile'] as const;

/** "Denver, CO", "Colorado", "80202" or "Denver, CO 80202" → the area searched; null without a zip or a state. */
export function dealArea(location: string): DealArea | null {
  const place = parsePlace(location);
  if (place.kind !== 'place' || (!place.postalCode && !place.state)) return null;
  return { city: place.city?.toLowerCase(), state: place.state, zip: place.postalCode };
}

const usd = (name: string) =>
  z
    .number({ error: `${name} must be a number of US dollars` })
    .int('must be a whole number of dollars')
    .min(0, 'must be at least 0')
    .max(1_000_000_000, 'must be at most 1000000000')
    .optional();
const beds = (text: string) =>
  z
    .number()
    .int('must be a whole number')
    .min(0, 'must be at least 0')
    .max(20, 'must be at most 20')
    .optional()
    .describe(text);

export const dealFinderInput = z
  .object({
    location: z
      .string({ error: 'location is required: "City, ST", a state or a 5-digit zip code' })
      .trim()
      .min(1, 'location is required: "City, ST", a state or a 5-digit zip code')
      .max(200)
      .superRefine((value, ctx) => {
        if (!dealArea(value))
          ctx.addIssue({
            code: 'custom',
            message:
              'must be a city with its state ("Denver, CO"), a state ("Colorado") or a 5-digit zip code ("80202")',
          });
      })
      .describe(
        'Where to look: a city with its state ("Denver, CO"), a whole state ("Colorado") or a zip code ("80202").',
      )
      .meta({ title: 'Location', examples: ['Denver, CO'] }),
    minDiscountPercent: z
      .number({ error: 'minDiscountPercent must be a number' })
      .min(0, 'must be at least 0')
      .max(95, 'must be at most 95')
      .default(10)
      .describe('List price at least this many percent below the estimated value; default 10.')
      .meta({ title: 'Discount, at least (%)', examples: [10] }),
    minPrice: usdAmount(usd('minPrice').describe('Lowest list price, USD.')).meta({
      title: 'List price, at least (USD)',
      examples: [200000],
    }),
    maxPrice: usdAmount(usd('maxPrice').describe('Highest list price, USD.')).meta({
      title: 'List price, at most (USD)',
      examples: [600000],
    }),
    propertyTypes: z
      .array(z.enum(PROPERTY_TYPES, { error: `must be one of ${PROPERTY_TYPES.join(', ')}` }))
      .min(1, 'give at least one property type, or leave propertyTypes out')
      .optional()
      .describe(`Only these types: ${PROPERTY_TYPES.join(', ')}; default all.`)
      .meta({ title: 'Property types', examples: [['single_family']] }),
    minBeds: beds('At least this many bedrooms.').meta({ title: 'Bedrooms, at least', examples: [2] }),
    maxBeds: beds('At most this many bedrooms.').meta({ title: 'Bedrooms, at most', examples: [4] }),
    maxItems: z
      .number({ error: 'maxItems must be a number' })
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(10_000, 'must be at most 10000')
      .default(100)
      .describe('Most properties returned (best deals first); default 100.')
      .meta({ title: 'Number of properties', examples: [100] }),
    fileName: z
      .string()
      .trim()
      .min(1)
      .max(50, 'fileName must be at most 50 characters')
      .optional()
      .describe('Export name, at most 50 characters.')
      .meta({ title: 'File name', examples: ['denver-deals'] }),
  })
  .superRefine((input, ctx) => {
    if (input.minPrice !== undefined && input.maxPrice !== undefined && input.minPrice > input.maxPrice) {
      ctx.addIssue({ code: 'custom', path: ['maxPrice'], message: 'maxPrice must not be below minPrice' });
    }
    if (input.minBeds !== undefined && input.maxBeds !== undefined && input.minBeds > input.maxBeds) {
      ctx.addIssue({ code: 'custom', path: ['maxBeds'], message: 'maxBeds must not be below minBeds' });
    }
  });
export type DealFinderInput = z.output<typeof dealFinderInput>;

function toRow(d: Deal): Row {
  return {
    address: formatAddress(d),
    street: d.street,
    city: d.city,
    state: d.state,
    zip: d.zip,
    property_type: d.propertyType,
    beds: d.beds,
    baths: d.baths,
    sqft: d.sqft,
    year_built: d.yearBuilt,
    list_price: d.listPrice,
    estimated_value: d.estimatedValue,
    discount_amount: d.estimatedValue - d.listPrice,
    discount_percent: Math.round(Number(d.discount) * 1000) / 10,
    price_per_sqft: d.sqft ? Math.round(d.listPrice / d.sqft) : null,
    days_on_market: d.daysOnMarket,
    last_sold_date: d.lastSoldDate,
    last_sold_price: d.lastSoldPrice,
    latitude: d.lat,
    longitude: d.lng,
  };
}

const price = perResult('property', '0.05');

export const dealFinderTool = defineTool({
  name: 'deal-finder',
  title: 'Deal finder',
  description:
    'Homes for sale in an area listed below their estimated value by at least a given margin, ' +
    'best deals first, with price, property type and bedroom filters.',
  rest: { path: '/api/v1/scrape/deal-finder' },
  graphql: { mutation: 'startDealFinder', inputType: 'StartDealFinderInput' },
  mcp: { name: 'find_deals', toolset: 'listings' },
  example: { location: 'Denver, CO', minDiscountPercent: 10, maxItems: 100 },
  input: dealFinderInput,
  price,
  cancellable: false,
  notes: [
    'A deal is a property currently for sale whose list price is at least minDiscountPercent below its ' +
      'estimated value: list price ≤ estimated value × (1 − minDiscountPercent / 100), the boundary included.',
    'location is a city with its state, a whole state or a zip code; ' +
      'a city without its state is refused (400 validation_failed), since many cities share a name.',
    'Results come largest discount first (then in catalog order), up to maxItems; ' +
      'pending, sold and off-market properties, and listings without an estimated value, are never returned.',
    'Price bounds apply to the list price and include their ends; bedroom bounds include their ends.',
    `Billed ${price.text} returned.`,
  ],
  identity: ['address'],
  columns: [
    { key: 'address', header: 'address', description: 'Full address' },
    { key: 'street', header: 'street', description: 'Street and number' },
    { key: 'city', header: 'city', description: 'City' },
    { key: 'state', header: 'state', description: 'Two-letter state code' },
    { key: 'zip', header: 'zip', description: 'Five-digit zip code' },
    {
      key: 'property_type',
      header: 'property_type',
      description: 'single_family, condo, townhouse, multi_family or mobile',
    },
    { key: 'beds', header: 'beds', description: 'Bedrooms', type: cell.int },
    { key: 'baths', header: 'baths', description: 'Bathrooms', type: cell.number },
    { key: 'sqft', header: 'sqft', description: 'Living area, square feet', type: cell.int },
    { key: 'year_built', header: 'year_built', description: 'Year built', type: cell.int },
    { key: 'list_price', header: 'list_price', description: 'Asking price, USD', type: cell.usd },
    { key: 'estimated_value', header: 'estimated_value', description: 'Estimated home value, USD', type: cell.usd },
    {
      key: 'discount_amount',
      header: 'discount_amount',
      description: 'Estimated value minus list price, USD',
      type: cell.usd,
    },
    {
      key: 'discount_percent',
      header: 'discount_percent',
      description: 'Discount as a percentage of the estimated value, one decimal',
      type: cell.number,
    },
    { key: 'price_per_sqft', header: 'price_per_sqft', description: 'List price per square foot, USD', type: cell.usd },
    { key: 'days_on_market', header: 'days_on_market', description: 'Days since listed', type: cell.int },
    { key: 'last_sold_date', header: 'last_sold_date', description: 'Date of the last sale' },
    { key: 'last_sold_price', header: 'last_sold_price', description: 'Price of the last sale, USD', type: cell.usd },
    { key: 'latitude', header: 'latitude', description: 'Latitude', type: cell.number },
    { key: 'longitude', header: 'longitude', description: 'Longitude', type: cell.number },
  ],
  requested: (input) => input.maxItems,
  describeStart(input) {
    return {
      message:
        `Looking for homes for sale in ${input.location} listed at least ` +
        `${input.minDiscountPercent}% below their estimated value, up to ${input.maxItems}`,
    };
  },
  async *run(ctx) {
    const { input } = ctx;
    const area = dealArea(input.location);
    if (!area) throw new Error(`the location "${input.location}" passed validation but names no area`);
    let after: { discount: string; id: number } | undefined;
    let taken = 0;
    while (taken < input.maxItems && !ctx.signal.aborted) {
      // Deals are ordered by a computed discount, which no index holds: read many per statement, store in batches.
      const limit = Math.min(READ_SIZE, input.maxItems - taken);
      const page = await ctx.sources.properties.findDeals({
        area,
        minDiscountPercent: input.minDiscountPercent,
        minPrice: input.minPrice,
        maxPrice: input.maxPrice,
        propertyTypes: input.propertyTypes,
        minBeds: input.minBeds,
        maxBeds: input.maxBeds,
        limit,
        after,
      });
      const last = page.at(-1);
      if (!last) break;
      taken += page.length;
      after = { discount: last.discount, id: last.id };
      const message = `${taken} deal${taken === 1 ? '' : 's'} found in ${input.location}`;
      // A short read is the search's end, as is the limit reached: its last slice is the run's last batch.
      const ends = page.length < limit || taken >= input.maxItems;
      for (let i = 0; i < page.length; i += PAGE_SIZE)
        yield { rows: page.slice(i, i + PAGE_SIZE).map(toRow), message, last: ends && i + PAGE_SIZE >= page.length };
      if (page.length < limit) break;
    }
  },
});
