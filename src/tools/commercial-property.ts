import { z } from 'zod';
import { AppError } from '../shared/errors.ts';
import { stateAbbreviation } from '../shared/geo.ts';
import { countOf, dollarRange } from './lib/listings/links.ts';
import {
  COMMERCIAL_LINK_FORMS,
  mapViewRefusal,
  parseCommercialLink,
  type CommercialLink,
} from './lib/listings/commercial-links.ts';
import type { CommercialProperty } from '../sources/commercial-properties.ts';
import { perResult } from '../billing/pricing.ts';
import { cell, defineTool, type Row } from './types.ts';

/** Properties one start URL yields at most (the spec: "typically 50 to 200"). */
export const PROPERTIES_PER_URL = 200;
const MAX_URLS = 50;

const commercialLink = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    try {
      parseCommercialLink(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

export const commercialPropertyInput = z.object({
  startUrls: z
    .array(commercialLink)
    .min(1, `give at least one URL; ${COMMERCIAL_LINK_FORMS}`)
    .max(MAX_URLS, `at most ${MAX_URLS} URLs per request`)
    .describe(
      'Listing-site URLs, any host, in three forms: (1) a property search or list URL with path /properties; ' +
        '(2) a city or market search with path /search and a location set (location, city and state, ' +
        'market or zip), scoped to it; (3) the broker directory /resources/find-a-broker/. Several URLs are allowed.',
    )
    .meta({ title: 'Listing-site links', examples: [['https://www.crelistings.net/search?location=Denver%2C%20CO']] }),
});
export type CommercialPropertyInput = z.output<typeof commercialPropertyInput>;

const links = (input: CommercialPropertyInput) => input.startUrls.map(parseCommercialLink);

function translation(link: CommercialLink) {
  return {
    url: link.url,
    form: link.form,
    filters: link.filters,
    ignored: link.ignored,
    maxProperties: PROPERTIES_PER_URL,
  };
}

/** "CO #01234567" → state CO, number 01234567; other formats keep the whole licence as the number. */
export function splitLicence(licence: string | null): { state: string | null; number: string | null } {
  if (!licence?.trim()) return { state: null, number: null };
  const [, code, number] = /^([A-Za-z]{2})\s*#?\s*([A-Za-z0-9-]+)$/.exec(licence.trim()) ?? [];
  const state = code ? stateAbbreviation(code) : undefined;
  return state && number ? { state, number } : { state: null, number: licence.trim() };
}

function toRow(p: CommercialProperty, link: CommercialLink): Row {
  const licence = splitLicence(p.brokerLicence);
  const stateZip = [p.state, p.zip].filter(Boolean).join(' ');
  return {
    property_id: /\/(\d+)\/?$/.exec(p.listingUrl)?.[1] ?? null,
    title: p.title,
    property_type: p.propertyType,
    listing_type: p.listingType,
    address: [p.street, p.city, stateZip].filter(Boolean).join(', '),
    street: p.street,
    city: p.city,
    state: p.state,
    zip: p.zip,
    market: p.market,
    latitude: p.lat,
    longitude: p.lng,
    price: p.price,
    size_sqft: p.sizeSqft,
    price_per_sqft: p.price !== null && p.sizeSqft ? Math.round((p.price / p.sizeSqft) * 100) / 100 : null,
    broker_name: p.brokerName,
    broker_company: p.brokerCompany,
    broker_phone: p.brokerPhone,
    broker_email: p.brokerEmail,
    broker_licence: p.brokerLicence,
    broker_licence_state: licence.state,
    broker_licence_number: licence.number,
    listing_url: p.listingUrl,
    start_url: link.url,
    start_url_form: link.form,
  };
}

export const commercialPropertyTool = defineTool({
  name: 'commercial-property',
  title: 'Commercial property scraper',
  description:
    'Commercial properties for sale or lease from property searches, city or market searches and the ' +
    'broker directory: address, coordinates, type, price, size and the broker contact and licence.',
  rest: { path: '/api/v1/scrape/cre-scraper' },
  graphql: { mutation: 'startCommercialPropertyScrape', inputType: 'StartCommercialPropertyScrapeInput' },
  mcp: { name: 'scrape_commercial_properties', toolset: 'listings' },
  example: { startUrls: ['https://www.crelistings.net/search?location=Denver%2C%20CO'] },
  input: commercialPropertyInput,
  price: perResult('property', '0.029'),
  cancellable: true,
  notes: [
    'Links of any host are read by their path: /properties (search or list, nationwide unless a location ' +
      'is set), /search (a city or market search) and /resources/find-a-broker/ (the broker directory); ' +
      'any other link is refused with 400 validation_failed naming startUrls.<i> and the accepted forms.',
    'A link that is a map view with no city or market chosen (map parameters such as bbox, bounds, ' +
      'mapCenter, mapZoom, lat/lng or view=map, or an @lat,lng path segment), ' +
      'and any /search link without a city or market, ' +
      'is refused with 400 map_view_not_allowed asking for a specific city or market.',
    'The location comes from the query (location "Denver, CO" or "80202", city with state, ' +
      'market, zip) or from a path segment ("denver-co", "colorado"); ' +
      'a place named without a state ("location=Denver") matches its market or a city of that name, ' +
      'and a state alone filters /properties links but is not a city or market for /search.',
    'Filters read from path segments ("office-space", "retail", "for-sale", "for-lease") ' +
      'or query parameters (types[] or type, listingType sale or lease, priceMin/priceMax in dollars, ' +
      'sizeMin/sizeMax in square feet); paging, sorting and tracking parameters are ignored, ' +
      'and any other parameter, and map parameters beside a city or market, ' +
      'are listed under url_translation[].ignored in the start response.',
    'A broker directory link yields the properties the matching brokers list (one row per property, ' +
      'with the broker contact and licence), since the price is per property; ' +
      'it accepts a location plus name, company and licence (partial matches, ignoring case).',
    'Each URL yields at most 200 properties, in catalog order; ' +
      'a property already delivered by an earlier URL of the same ' +
      "run is not repeated and does not count toward that URL's 200.",
    'price is the asking price of a sale or the yearly rent of a lease, and price_per_sqft divides it by size_sqft.',
  ],
  identity: ['property_id'],
  columns: [
    { key: 'property_id', header: 'property_id', description: 'Listing id from the listing URL' },
    { key: 'title', header: 'title', description: 'Listing title' },
    {
      key: 'property_type',
      header: 'property_type',
      description: 'office, retail, industrial, multifamily, land, hospitality, mixed_use or healthcare',
    },
    { key: 'listing_type', header: 'listing_type', description: 'sale or lease' },
    { key: 'address', header: 'address', description: 'Full street address' },
    { key: 'street', header: 'street', description: 'Street and number' },
    { key: 'city', header: 'city', description: 'City' },
    { key: 'state', header: 'state', description: 'State code' },
    { key: 'zip', header: 'zip', description: 'ZIP code' },
    { key: 'market', header: 'market', description: 'Metro market' },
    { key: 'latitude', header: 'latitude', description: 'Latitude', type: cell.number },
    { key: 'longitude', header: 'longitude', description: 'Longitude', type: cell.number },
    { key: 'price', header: 'price', description: 'Asking price (sale) or yearly rent (lease), USD', type: cell.usd },
    { key: 'size_sqft', header: 'size_sqft', description: 'Building or lot size, square feet', type: cell.int },
    { key: 'price_per_sqft', header: 'price_per_sqft', description: 'price divided by size_sqft, USD', type: cell.usd },
    { key: 'broker_name', header: 'broker_name', description: 'Listing broker' },
    { key: 'broker_company', header: 'broker_company', description: "Broker's firm" },
    { key: 'broker_phone', header: 'broker_phone', description: "Broker's phone" },
    { key: 'broker_email', header: 'broker_email', description: "Broker's email" },
    { key: 'broker_licence', header: 'broker_licence', description: 'Broker\'s licence as filed, e.g. "CO #01234567"' },
    {
      key: 'broker_licence_state',
      header: 'broker_licence_state',
      description: 'State that issued the licence, when the licence names one',
    },
    { key: 'broker_licence_number', header: 'broker_licence_number', description: 'Licence number' },
    { key: 'listing_url', header: 'listing_url', description: 'Listing URL' },
    { key: 'start_url', header: 'start_url', description: 'The start URL that found the property' },
    {
      key: 'start_url_form',
      header: 'start_url_form',
      description: 'Form of that URL: properties, search or broker-directory',
    },
  ],
  requested: (input) => input.startUrls.length * PROPERTIES_PER_URL,
  startDetails: z.object({
    url_translation: z
      .array(
        z
          .object({
            url: z.string().describe('The URL sent.'),
            form: z
              .enum(['properties', 'search', 'broker-directory'])
              .describe('What the URL is: properties, search or broker-directory.'),
            filters: z
              .object({
                state: z.string().optional().describe('Two-letter state code.'),
                city: z.string().optional().describe('City, in slug words ("salt lake city").'),
                market: z.string().optional().describe('Metro market, lower case ("denver").'),
                place: z
                  .string()
                  .optional()
                  .describe('A place named without a state: its market or a city of that name.'),
                zip: z.string().optional().describe('ZIP code.'),
                propertyTypes: z.array(z.string()).optional().describe('Property types.'),
                listingType: z.enum(['sale', 'lease']).optional().describe('sale or lease.'),
                price: dollarRange.optional().describe('Price.'),
                sizeSqft: z
                  .object({
                    min: z.number().optional().describe('At least this.'),
                    max: z.number().optional().describe('At most this.'),
                  })
                  .optional()
                  .describe('Size, square feet.'),
                brokerName: z.string().optional().describe('Broker directory: part of the broker’s name.'),
                brokerCompany: z.string().optional().describe('Broker directory: part of the broker’s firm.'),
                brokerLicence: z.string().optional().describe('Broker directory: part of the broker’s licence.'),
              })
              .describe('The filters the URL was read as.'),
            ignored: z.array(z.string()).describe('Query parameters that do not change what is searched.'),
            maxProperties: z.int().describe('Most properties taken from this URL.'),
          })
          .describe('How one URL was read.'),
      )
      .describe('How each URL was read, in order.'),
  }),
  describeStart(input) {
    const parsed = links(input);
    const refused = parsed.flatMap((link, i) => {
      const reason = mapViewRefusal(link);
      return reason ? [{ path: `startUrls.${i}`, message: reason }] : [];
    });
    if (refused.length > 0) {
      throw new AppError(
        400,
        'map_view_not_allowed',
        `${refused.map((r) => `${r.path} ${r.message}`).join('; ')}.`,
        refused,
      );
    }
    return {
      message: `Scraping ${countOf(parsed.length, 'URL')}, up to ${PROPERTIES_PER_URL} properties each`,
      extra: { url_translation: parsed.map(translation) },
    };
  },
  async *run(ctx) {
    const seen = new Set<string>();
    let total = 0;
    for (const [index, link] of links(ctx.input).entries()) {
      const { filters } = link;
      let taken = 0;
      let afterId: number | undefined;
      while (taken < PROPERTIES_PER_URL && !ctx.signal.aborted) {
        const page = await ctx.sources.commercialProperties.searchProperties({
          ...filters,
          limit: PROPERTIES_PER_URL - taken,
          afterId,
        });
        const last = page.at(-1);
        if (!last) break;
        afterId = last.id;
        const rows: Row[] = [];
        for (const property of page) {
          if (seen.has(property.listingUrl)) continue;
          seen.add(property.listingUrl);
          rows.push(toRow(property, link));
        }
        taken += rows.length;
        total += rows.length;
        yield {
          rows,
          message:
            `URL ${index + 1} of ${ctx.input.startUrls.length}: ` +
            `${countOf(taken, 'property', 'properties')}; ${total} in all`,
        };
      }
      if (ctx.signal.aborted) break;
    }
  },
});
