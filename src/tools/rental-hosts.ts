import { z } from 'zod';
import { localAmount } from '../shared/amounts.ts';
import { formatDollars } from '../billing/money.ts';
import { ValidationError } from '../shared/errors.ts';
import { countryCode } from '../shared/geo.ts';
import { roomIdOf, type RentalListing } from '../sources/rentals.ts';
import { perResult } from '../billing/pricing.ts';
import { cell, defineTool, type Row } from './types.ts';
import { plural } from '../shared/text.ts';

/** Listings on one page of a city's search results. */
export const LISTINGS_PER_PAGE = 20;
export const MAX_PAGES = 100;
/** Listings read per source call (several pages at once). */
const FETCH_SIZE = 200;
/** Listing links looked up per source call. */
const URL_CHUNK = 200;

/** Europe by ISO 3166-1 alpha-2 (UN geoscheme, with Cyprus and Kosovo). */
const EUROPEAN_COUNTRIES = new Set(
  (
    'AD AL AT AX BA BE BG BY CH CY CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM ' +
    'IS IT JE LI LT LU LV MC MD ME MK MT NL NO PL PT RO RS RU SE SI SJ SK SM UA VA XK'
  ).split(' '),
);
/** Names people write that the region list does not spell that way. */
const COUNTRY_ALIASES: Record<string, string> = {
  'czech republic': 'CZ',
  holland: 'NL',
  'the netherlands': 'NL',
  england: 'GB',
  scotland: 'GB',
  wales: 'GB',
  'northern ireland': 'GB',
  'bosnia and herzegovina': 'BA',
  macedonia: 'MK',
  vatican: 'VA',
};
const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region' });

export interface CityQuery {
  city: string;
  countryCode: string;
  /** As sent, for rows and messages. */
  text: string;
}

/** Reads "Lisbon, Portugal" (or "Lisbon, PT"); throws an Error saying what is wrong. */
export function parseCity(text: string): CityQuery {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length !== 2 || !parts[0] || !parts[1])
    throw new Error(`"${text}" must be "City, Country", e.g. "Lisbon, Portugal"`);
  const [city, country] = parts as [string, string];
  const code = COUNTRY_ALIASES[country.toLowerCase()] ?? countryCode(country);
  if (!code)
    throw new Error(
      `"${text}": unknown country "${country}"; write the country's English name or ISO code, e.g. "Lisbon, Portugal"`,
    );
  if (!EUROPEAN_COUNTRIES.has(code)) {
    throw new Error(
      `"${text}": ${REGION_NAMES.of(code) ?? country} is not in Europe; this tool covers European countries only`,
    );
  }
  return {
    city: city.replace(/\s+/g, ' '),
    countryCode: code,
    text,
  };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const isDate = (value: string) => {
  const m = DATE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
};
const nightsBetween = (checkin: string, checkout: string) =>
  Math.round((Date.parse(checkout) - Date.parse(checkin)) / 86_400_000);

const listingUrl = z
  .string()
  .trim()
  .refine(
    (url) => roomIdOf(url) !== undefined,
    'must be a listing link whose path ends in /rooms/<id>, e.g. "https://<site>/rooms/12345678"',
  );

const cityText = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    try {
      parseCity(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

const date = z.string().trim().refine(isDate, 'must be a date written YYYY-MM-DD, e.g. "2027-06-01"');
const price = z.number().min(0, 'must be 0 or more').max(1_000_000);

export const rentalHostsInput = z
  .object({
    mode: z
      .enum(['city', 'single', 'bulk'])
      .default('city')
      .describe('"city": search cities; "single": one listing (listingUrl); "bulk": many listings (bulkListings).')
      .meta({ title: 'Search mode', examples: ['city'] }),
    city: z
      .array(cityText)
      .min(1)
      .max(50)
      .optional()
      .describe(
        'City mode: cities written "City, Country", e.g. ' +
          '["Lisbon, Portugal", "Berlin, Germany"]; European countries only.',
      )
      .meta({ title: 'Cities', examples: [['Lisbon, Portugal']] }),
    listingUrl: listingUrl
      .optional()
      .describe('Single mode: one listing link, e.g. "https://<site>/rooms/12345678".')
      .meta({ title: 'Listing link', examples: ['https://www.airbnb.com/rooms/12345678'] }),
    bulkListings: z
      .array(listingUrl)
      .min(1)
      .max(1_000)
      .optional()
      .describe('Bulk mode: listing links.')
      .meta({ title: 'Listing links', examples: [['https://www.airbnb.com/rooms/12345678']] }),
    maxPages: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(MAX_PAGES, `must be at most ${MAX_PAGES}`)
      .default(1)
      .describe(`City mode: result pages read per city, ${LISTINGS_PER_PAGE} listings each; default 1.`)
      .meta({ title: 'Pages per city', examples: [1] }),
    checkin: date
      .optional()
      .describe('Check-in date, YYYY-MM-DD; sent with checkout.')
      .meta({ title: 'Check-in date', examples: ['2027-06-01'] }),
    checkout: date
      .optional()
      .describe('Check-out date, YYYY-MM-DD, after checkin.')
      .meta({ title: 'Check-out date', examples: ['2027-06-05'] }),
    onlyProHosts: z
      .boolean()
      .default(false)
      .describe('Only listings of professional hosts (property managers); default false.')
      .meta({ title: 'Only professional hosts', examples: [false] }),
    onlyUniqueEmails: z
      .boolean()
      .default(false)
      .describe('Deduplicate by host email: each email once, rows without an email left out; default false.')
      .meta({ title: 'One row per host email', examples: [false] }),
    amenities: z
      .array(z.string().trim().min(1, 'must not be empty').max(100))
      .max(20)
      .optional()
      .describe(
        'City mode: only listings having every one of these amenities (ignoring case), e.g. ["Wifi", "Kitchen"].',
      )
      .meta({ title: 'Amenities', examples: [['Wifi', 'Kitchen']] }),
    onlySuperhosts: z
      .boolean()
      .optional()
      .describe('City mode: only listings of superhosts.')
      .meta({ title: 'Only superhosts', examples: [false] }),
    minPrice: localAmount(
      price
        .optional()
        .describe(
          "City mode: lowest nightly price, in the listing's own currency (EUR in the euro area, GBP in the UK, …).",
        ),
    ).meta({ title: 'Nightly price, at least', examples: [50] }),
    maxPrice: localAmount(
      price.optional().describe("City mode: highest nightly price, in the listing's own currency."),
    ).meta({ title: 'Nightly price, at most', examples: [200] }),
  })
  .superRefine((input, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    const { mode } = input;
    if (mode === 'city' && !input.city) {
      issue(
        'city',
        'required in city mode (the default): cities written "City, Country", e.g. ' +
          '["Lisbon, Portugal"]; for listing links use mode "single" or "bulk"',
      );
    }
    if (mode === 'single' && !input.listingUrl) issue('listingUrl', 'required in single mode: one listing link');
    if (mode === 'bulk' && !input.bulkListings) issue('bulkListings', 'required in bulk mode: listing links');
    const owner: Record<'city' | 'listingUrl' | 'bulkListings', typeof mode> = {
      city: 'city',
      listingUrl: 'single',
      bulkListings: 'bulk',
    };
    for (const [field, fieldMode] of Object.entries(owner) as [keyof typeof owner, typeof mode][]) {
      if (input[field] !== undefined && mode !== fieldMode)
        issue(field, `is for mode "${fieldMode}"; this request's mode is "${mode}"`);
    }
    if (mode !== 'city') {
      if (input.amenities?.length) issue('amenities', 'applies to city mode only');
      if (input.onlySuperhosts) issue('onlySuperhosts', 'applies to city mode only');
      if (input.minPrice !== undefined) issue('minPrice', 'applies to city mode only');
      if (input.maxPrice !== undefined) issue('maxPrice', 'applies to city mode only');
    }
    if (input.minPrice !== undefined && input.maxPrice !== undefined && input.maxPrice < input.minPrice)
      issue('maxPrice', 'must not be below minPrice');
    if (input.checkin && !input.checkout) issue('checkout', 'required with checkin');
    if (input.checkout && !input.checkin) issue('checkin', 'required with checkout');
    if (
      input.checkin &&
      input.checkout &&
      isDate(input.checkin) &&
      isDate(input.checkout) &&
      input.checkout <= input.checkin
    ) {
      issue('checkout', 'must be after checkin');
    }
  });
export type RentalHostsInput = z.output<typeof rentalHostsInput>;

/** The distinct cities of a city-mode input, in the order sent. */
export function citiesOf(input: RentalHostsInput): CityQuery[] {
  const seen = new Set<string>();
  return (input.city ?? []).map(parseCity).filter((c) => {
    const key = `${c.city.toLowerCase()}|${c.countryCode}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const linksOf = (input: RentalHostsInput) => [
  ...new Set(input.mode === 'single' ? (input.listingUrl ? [input.listingUrl] : []) : (input.bulkListings ?? [])),
];

function toRow(listing: RentalListing, input: RentalHostsInput): Row {
  const nights = input.checkin && input.checkout ? nightsBetween(input.checkin, input.checkout) : null;
  return {
    host_name: listing.host.name,
    host_email: listing.host.email,
    host_phone: listing.host.phone,
    host_url: listing.host.profileUrl,
    pro_host: listing.host.isPro,
    superhost: listing.host.isSuperhost,
    host_listings: listing.host.listingsCount,
    listing_url: listing.listingUrl,
    title: listing.title,
    city: listing.city,
    country: listing.country,
    country_code: listing.countryCode,
    price: listing.pricePerNight,
    currency: listing.currency,
    checkin: input.checkin ?? null,
    checkout: input.checkout ?? null,
    stay_price:
      nights !== null && listing.pricePerNight !== null ? Math.round(listing.pricePerNight * nights * 100) / 100 : null,
    amenities: listing.amenities,
    bedrooms: listing.bedrooms,
    guests: listing.guests,
    rating: listing.rating,
    review_count: listing.reviewCount,
  };
}

const perRow = perResult(
  'result',
  '0.019',
  (each, unitMicros) => `${each} per result (${formatDollars(unitMicros * 1000n)} USD per 1,000)`,
);

export const rentalHostsTool = defineTool({
  name: 'rental-hosts',
  title: 'Rental host scraper',
  description:
    'Hosts of short-term rental listings in European cities, or of given listing links: host name, email, phone, ' +
    'pro host and superhost flags, with the listing (title, city, country, nightly price, amenities, rating).',
  rest: { path: '/api/v1/scrape/rental-host-email' },
  graphql: { mutation: 'startRentalHostsScrape', inputType: 'StartRentalHostsScrapeInput' },
  mcp: { name: 'scrape_rental_hosts', toolset: 'directories', openWorld: true },
  example: { mode: 'city', city: ['Lisbon, Portugal'], maxPages: 1 },
  input: rentalHostsInput,
  price: perRow,
  cancellable: false,
  notes: [
    'mode "city" (the default) needs `city`, "single" needs `listingUrl`, "bulk" needs `bulkListings`; ' +
      'a field of another mode is refused with 400 validation_failed rather than ignored.',
    'Cities are written "City, Country" with the country as its English name or ISO code ("Lisbon, ' +
      'Portugal", "Lisbon, PT"); a country outside Europe (UN geoscheme, plus Cyprus and Kosovo) ' +
      'is refused with 400 validation_failed naming the entry (e.g. `city.1`).',
    'City names match the catalog ignoring case, in their English spelling ("Lisbon", "Munich"); ' +
      'a city the catalog does not cover returns no rows, and a city sent twice is searched once.',
    `A result page holds ${LISTINGS_PER_PAGE} listings: maxPages (default 1, ` +
      `at most ${MAX_PAGES}) reads up to maxPages × ${LISTINGS_PER_PAGE} listings per city, ` +
      'in catalog order; maxPages is ignored in single and bulk modes.',
    'Listing links are read by the path ending in /rooms/<id>, whatever the host, scheme, query or fragment; ' +
      'a link of no listing in the catalog returns no row, and a listing sent twice is returned once.',
    'The amenity, superhost and price filters (`amenities`, `onlySuperhosts`, `minPrice`, ' +
      '`maxPrice`) apply to city mode only and narrow the search before paging; ' +
      'amenities must all be present and match ignoring case.',
    "minPrice and maxPrice are nightly prices in each listing's own currency (EUR in the euro area, " +
      'GBP in the UK, CZK, HUF, DKK …); a listing without a price fails any price filter.',
    'onlyProHosts applies in every mode (in city mode before paging); ' +
      'onlyUniqueEmails applies in every mode after paging: each host email (ignoring case) ' +
      'appears once, under its first listing, and rows without an email are left out.',
    'checkin and checkout (YYYY-MM-DD) go together and checkout must be after checkin; ' +
      'a checkin before yesterday (UTC) is refused; the catalog has no availability calendar, ' +
      'so the dates do not filter listings: they are recorded on each row with `stay_price` (nightly price × nights).',
    `The run holds the cost of every listing it may return (cities × maxPages × ${LISTINGS_PER_PAGE}, ` +
      `or one per distinct link) and is billed ${perRow.each} per row delivered.`,
  ],
  identity: ['listing_url'],
  columns: [
    { key: 'host_name', header: 'host_name', description: 'Host name as shown on the listing' },
    { key: 'host_email', header: 'host_email', description: 'Host email address' },
    { key: 'host_phone', header: 'host_phone', description: 'Host phone number' },
    { key: 'host_url', header: 'host_url', description: "Link of the host's profile" },
    { key: 'pro_host', header: 'pro_host', description: 'Professional host (property manager)', type: cell.bool },
    { key: 'superhost', header: 'superhost', description: 'Superhost', type: cell.bool },
    { key: 'host_listings', header: 'host_listings', description: 'Listings the host has', type: cell.int },
    { key: 'listing_url', header: 'listing_url', description: 'Listing link' },
    { key: 'title', header: 'title', description: 'Listing title' },
    { key: 'city', header: 'city', description: 'City of the listing' },
    { key: 'country', header: 'country', description: 'Country of the listing' },
    { key: 'country_code', header: 'country_code', description: 'ISO country code' },
    { key: 'price', header: 'price', description: 'Nightly price, in `currency`', type: cell.localAmount },
    { key: 'currency', header: 'currency', description: 'Currency of the prices (ISO 4217)' },
    { key: 'checkin', header: 'checkin', description: 'Check-in date sent, YYYY-MM-DD' },
    { key: 'checkout', header: 'checkout', description: 'Check-out date sent, YYYY-MM-DD' },
    {
      key: 'stay_price',
      header: 'stay_price',
      description: 'Nightly price × nights between checkin and checkout (empty without dates)',
      type: cell.localAmount,
    },
    { key: 'amenities', header: 'amenities', description: 'Amenities of the listing', type: cell.texts },
    { key: 'bedrooms', header: 'bedrooms', description: 'Bedrooms', type: cell.int },
    { key: 'guests', header: 'guests', description: 'Guests the listing sleeps', type: cell.int },
    {
      key: 'rating',
      header: 'rating',
      description: 'Average guest rating, 1–5 (empty without reviews)',
      type: cell.number,
    },
    { key: 'review_count', header: 'review_count', description: 'Number of guest reviews', type: cell.int },
  ],
  requested: (input) =>
    input.mode === 'city' ? citiesOf(input).length * input.maxPages * LISTINGS_PER_PAGE : linksOf(input).length,
  describeStart(input) {
    if (input.checkin) {
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      if (input.checkin < yesterday)
        throw new ValidationError([{ path: 'checkin', message: `${input.checkin} is in the past` }]);
    }
    if (input.mode === 'city') {
      const cities = citiesOf(input);
      return {
        message:
          `Searching ${cities.length} ${cities.length === 1 ? 'city' : 'cities'} ` +
          `(${cities.map((c) => c.text).join('; ')}), ` +
          `up to ${plural(input.maxPages, 'page')} of ${LISTINGS_PER_PAGE} listings each`,
      };
    }
    return { message: `Reading ${plural(linksOf(input).length, 'listing link')}` };
  },
  async *run(ctx) {
    const { input } = ctx;
    const emails = new Set<string>();
    let delivered = 0;
    /** onlyUniqueEmails: each email once, rows without one left out. */
    const keep = (listing: RentalListing) => {
      if (!input.onlyUniqueEmails) return true;
      const email = listing.host.email?.trim().toLowerCase();
      if (!email || emails.has(email)) return false;
      emails.add(email);
      return true;
    };
    const rowsOf = (listings: RentalListing[]) => {
      const rows = listings.filter(keep).map((l) => toRow(l, input));
      delivered += rows.length;
      return rows;
    };

    if (input.mode === 'city') {
      for (const city of citiesOf(input)) {
        const limit = input.maxPages * LISTINGS_PER_PAGE;
        let read = 0;
        let afterId: number | undefined;
        while (read < limit && !ctx.signal.aborted) {
          const page = await ctx.sources.rentals.searchListings({
            city: city.city,
            countryCode: city.countryCode,
            amenities: input.amenities ?? [],
            onlySuperhosts: input.onlySuperhosts ?? false,
            onlyProHosts: input.onlyProHosts,
            minPrice: input.minPrice,
            maxPrice: input.maxPrice,
            limit: Math.min(FETCH_SIZE, limit - read),
            afterId,
          });
          const last = page.at(-1);
          if (!last) break;
          afterId = last.id;
          read += page.length;
          yield {
            rows: rowsOf(page),
            handled: page.length,
            message: `${city.text}: ${plural(read, 'listing')} read; ${plural(delivered, 'result')} so far`,
          };
        }
      }
      return;
    }

    const links = linksOf(input);
    const listed = new Set<number>();
    for (let i = 0; i < links.length && !ctx.signal.aborted; i += URL_CHUNK) {
      const chunk = links.slice(i, i + URL_CHUNK);
      const found = (await ctx.sources.rentals.listingsByUrls(chunk)).filter((l) => {
        if (listed.has(l.id) || (input.onlyProHosts && !l.host.isPro)) return false;
        listed.add(l.id);
        return true;
      });
      yield {
        rows: rowsOf(found),
        handled: chunk.length,
        message: `${plural(i + chunk.length, 'listing link')} read; ${plural(delivered, 'result')} so far`,
      };
    }
  },
});
