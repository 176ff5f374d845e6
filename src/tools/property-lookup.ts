import { z } from 'zod';
import {
  addressCells,
  addressList,
  lookUpAddresses,
  MAX_ADDRESSES,
  uniqueAddresses,
  type LookupResult,
} from './lib/properties/lookup.ts';
import type { PropertyDetails } from '../sources/properties.ts';
import { perFound } from '../billing/pricing.ts';
import { cell, defineTool, type Row } from './types.ts';
import { usdAmount } from '../shared/amounts.ts';

/**
 * The owner-contact run's price (property-owner-contact.ts), declared here beside the lookup's own
 * because the lookup's price text quotes it and the owner-contact tool already imports this file.
 */
export const ownerContactPrice = perFound(
  'property',
  '0.10',
  (row) =>
    row.status === 'found' && ((row.owner_phones as string[]).length > 0 || (row.owner_emails as string[]).length > 0),
  (each) =>
    `${each} per property for owner contact (with property lookup's includeOwnerContact); ` +
    'free when no phone or email is known',
);

export const propertyLookupInput = z.object({
  addresses: addressList.meta({ title: 'Addresses', examples: [['1600 Pennsylvania Ave NW, Washington, DC 20500']] }),
  includeOwnerContact: z
    .boolean({ error: 'includeOwnerContact must be true or false' })
    .default(false)
    .describe(
      "Also find the owner's phones and emails, " +
        `in a second run billed ${ownerContactPrice.each} per property; default false.`,
    )
    .meta({ title: "Also find the owner's contacts", examples: [false] }),
  fileName: z
    .string()
    .trim()
    .min(1)
    .max(50, 'fileName must be at most 50 characters')
    .optional()
    .describe('Export name, at most 50 characters.')
    .meta({ title: 'File name', examples: ['dc-properties'] }),
});
export type PropertyLookupInput = z.output<typeof propertyLookupInput>;

function toRow(input: string, result: LookupResult<PropertyDetails>): Row {
  const p = result.status === 'found' ? result.property : null;
  return {
    ...addressCells(input, result),
    latitude: p?.lat ?? null,
    longitude: p?.lng ?? null,
    property_type: p?.propertyType ?? null,
    beds: p?.beds ?? null,
    baths: p?.baths ?? null,
    sqft: p?.sqft ?? null,
    lot_sqft: p?.lotSqft ?? null,
    year_built: p?.yearBuilt ?? null,
    estimated_value: p?.estimatedValue ?? null,
    listing_status: p?.listingStatus ?? null,
    list_price: p?.listPrice ?? null,
    days_on_market: p?.daysOnMarket ?? null,
    last_sold_date: p?.lastSoldDate ?? null,
    last_sold_price: p?.lastSoldPrice ?? null,
    price_history: p?.priceHistory ?? null,
    tax_history: p?.taxHistory ?? null,
    comparables: p?.comparables ?? null,
    schools: p?.schools ?? null,
    owner_name: p?.ownerName ?? null,
    owner_mailing_address: p?.ownerMailingAddress ?? null,
    message: result.status === 'found' ? null : result.message,
  };
}

/** Result columns every lookup run starts with (shared with the owner-contact run). */
/** The nested columns' values (db/tables/properties.ts: PriceEvent, TaxYear, Comparable, School). */
const PRICE_HISTORY = cell.list(
  z
    .object({
      date: z.string().describe('When, YYYY-MM-DD.'),
      event: z.string().describe('What happened, e.g. "Sold" or "Listed for sale".'),
      price: usdAmount(z.number()).describe('The price.'),
    })
    .describe('A price event.'),
);
const TAX_HISTORY = cell.list(
  z
    .object({
      year: z.int().describe('The tax year.'),
      tax: usdAmount(z.number()).describe('Property tax paid.'),
      assessment: usdAmount(z.number()).describe('Assessed value.'),
    })
    .describe('Property tax of one year.'),
);
const COMPARABLES = cell.list(
  z
    .object({
      address: z.string().describe('Its address.'),
      price: usdAmount(z.number()).describe('Its sale price.'),
      sqft: z.int().describe('Its living area, square feet.'),
      distanceMiles: z.number().describe('How far, in miles.'),
    })
    .describe('A comparable sale nearby.'),
);
const SCHOOLS = cell.list(
  z
    .object({
      name: z.string().describe('The school’s name.'),
      level: z.string().describe('elementary, middle or high.'),
      rating: z.int().describe('Rating, 1 to 10.'),
      distanceMiles: z.number().describe('How far, in miles.'),
    })
    .describe('A school nearby.'),
);

export const ADDRESS_COLUMNS = [
  { key: 'input_address', header: 'input_address', description: 'The address as sent' },
  {
    key: 'status',
    header: 'status',
    description:
      'found; not_found (no property at the address); ' +
      'ambiguous (a partial address fits several properties); duplicate (same property as an earlier address)',
  },
  {
    key: 'match_type',
    header: 'match_type',
    description: 'How the property was found: exact (whole address), street_and_zip or street_and_city',
  },
  { key: 'address', header: 'address', description: 'Full address of the property found' },
  { key: 'street', header: 'street', description: 'Street and number' },
  { key: 'city', header: 'city', description: 'City' },
  { key: 'state', header: 'state', description: 'Two-letter state code' },
  { key: 'zip', header: 'zip', description: 'Five-digit zip code' },
];

const price = perFound(
  'property',
  '0.15',
  (row) => row.status === 'found',
  (each) =>
    `${each} per property, plus ${ownerContactPrice.each} per property for owner contact; addresses not found are free`,
);

export const propertyLookupTool = defineTool({
  name: 'property-lookup',
  title: 'Property lookup',
  description:
    'US residential properties by address: estimated home value, price history, ' +
    'tax history, comparable sales, nearby schools, owner name and mailing address; ' +
    "with includeOwnerContact, the owner's phones and emails in a second run.",
  rest: {
    path: '/api/v1/scrape/property-lookup',
    // The spec's example path, outside the versioned prefix (docs/versioning.md): served, announced as going.
    aliases: [
      {
        path: '/api/scrape/property-lookup',
        deprecated: { since: '2026-11-26', sunset: '2027-11-30', link: '/api/v1/openapi.json' },
      },
    ],
  },
  graphql: { mutation: 'startPropertyLookup', inputType: 'StartPropertyLookupInput' },
  mcp: { name: 'property_lookup', toolset: 'database' },
  example: { addresses: ['1600 Pennsylvania Ave NW, Washington, DC 20500'], includeOwnerContact: true },
  input: propertyLookupInput,
  price,
  cancellable: true,
  notes: [
    'Addresses are normalised before matching: USPS street suffixes and directionals (Street → St, North → N), ' +
      'unit numbers (Apt, Suite, #), case and spacing, state names to two-letter codes, zip+4 to five digits.',
    'Each address is matched by its whole normalised address first, then by house number and street within its ' +
      'zip code, then within its city and state, so partial addresses such as "1234 Main St, 80202" still match.',
    'Every address gives one row, in the order sent, with status found, not_found, ' +
      'ambiguous (several properties fit a partial address; ' +
      'the message says whether to add the zip or the unit) or duplicate (the same property as an earlier address).',
    `Only found properties are billed (${price.each} each); ` +
      'not_found, ambiguous and duplicate rows are free, and the same address sent twice is looked up once.',
    'Each address needs a house number and street plus a city or a zip code; ' +
      'otherwise the request is refused with 400 validation_failed naming the address.',
    `At most ${MAX_ADDRESSES} addresses per request.`,
    'With includeOwnerContact the start response also carries ownerContactRunId: ' +
      'a second run (Property owner contact) over the same addresses, held and billed on its own at ' +
      `${ownerContactPrice.each} per property; both are created together, ` +
      'and if the wallet cannot cover either, neither is created (402).',
    'Phones and emails are in the owner-contact run only; this run returns the owner name and mailing address.',
    'Also accepted without the version segment, as POST /api/scrape/property-lookup.',
  ],
  identity: ['address'],
  columns: [
    ...ADDRESS_COLUMNS,
    { key: 'latitude', header: 'latitude', description: 'Latitude', type: cell.number },
    { key: 'longitude', header: 'longitude', description: 'Longitude', type: cell.number },
    {
      key: 'property_type',
      header: 'property_type',
      description: 'single_family, condo, townhouse, multi_family or mobile',
    },
    { key: 'beds', header: 'beds', description: 'Bedrooms', type: cell.int },
    { key: 'baths', header: 'baths', description: 'Bathrooms', type: cell.number },
    { key: 'sqft', header: 'sqft', description: 'Living area, square feet', type: cell.int },
    { key: 'lot_sqft', header: 'lot_sqft', description: 'Lot size, square feet', type: cell.int },
    { key: 'year_built', header: 'year_built', description: 'Year built', type: cell.int },
    { key: 'estimated_value', header: 'estimated_value', description: 'Estimated home value, USD', type: cell.usd },
    { key: 'listing_status', header: 'listing_status', description: 'off_market, for_sale, pending or sold' },
    { key: 'list_price', header: 'list_price', description: 'Asking price when listed, USD', type: cell.usd },
    {
      key: 'days_on_market',
      header: 'days_on_market',
      description: 'Days listed, when for sale or pending',
      type: cell.int,
    },
    { key: 'last_sold_date', header: 'last_sold_date', description: 'Date of the last sale' },
    { key: 'last_sold_price', header: 'last_sold_price', description: 'Price of the last sale, USD', type: cell.usd },
    {
      key: 'price_history',
      header: 'price_history',
      description: 'Price events: date, event, price',
      type: PRICE_HISTORY,
    },
    {
      key: 'tax_history',
      header: 'tax_history',
      description: 'Property tax by year: year, tax, assessment',
      type: TAX_HISTORY,
    },
    {
      key: 'comparables',
      header: 'comparables',
      description: 'Comparable sales nearby: address, price, sqft, distance in miles',
      type: COMPARABLES,
    },
    {
      key: 'schools',
      header: 'schools',
      description: 'Nearby schools: name, level, rating 1–10, distance in miles',
      type: SCHOOLS,
    },
    { key: 'owner_name', header: 'owner_name', description: 'Owner of record' },
    { key: 'owner_mailing_address', header: 'owner_mailing_address', description: "Owner's mailing address" },
    {
      key: 'message',
      header: 'message',
      description: 'Why an address was not found, was ambiguous or was a duplicate',
    },
  ],
  requested: (input) => input.addresses.length,
  startDetails: z.object({
    ownerContactRunId: z
      .string()
      .optional()
      .describe('The runId of the owner-contact run started with this one (includeOwnerContact); absent otherwise.'),
  }),
  describeStart(input) {
    const { addresses, duplicates } = uniqueAddresses(input.addresses);
    const parts = [`Looking up ${addresses.length} address${addresses.length === 1 ? '' : 'es'}`];
    if (duplicates > 0) parts.push(` (${duplicates} repeated address${duplicates === 1 ? '' : 'es'} skipped)`);
    if (input.includeOwnerContact) parts.push('; owner phones and emails come in a second run (ownerContactRunId)');
    return { message: parts.join(''), input: { ...input, addresses } };
  },
  linkedRuns(input) {
    if (!input.includeOwnerContact) return [];
    return [
      {
        tool: 'property-owner-contact',
        input: {
          addresses: input.addresses,
          ...(input.fileName ? { fileName: `${input.fileName.slice(0, 36)}-owner-contact` } : {}),
        },
        field: 'ownerContactRunId',
      },
    ];
  },
  async *run(ctx) {
    const source = ctx.sources.properties;
    yield* lookUpAddresses({
      addresses: ctx.input.addresses,
      source,
      load: (select) => source.details(select),
      toRow,
      signal: ctx.signal,
    });
  },
});
