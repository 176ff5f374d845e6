import { z } from 'zod';
import { HOME_SERVICE_CATEGORIES } from '../../db/tables/home-services.ts';
import { categorySlug, unknownCategoryMessage } from './lib/home-services/categories.ts';
import type { ServicePro } from '../sources/home-services.ts';
import { perResult } from '../billing/pricing.ts';
import { cell, defineTool, type Row } from './types.ts';

const PAGE_SIZE = 200;
/** The largest explicit `maxItems`; also what a run with `maxItems: 0` (unlimited) holds money for. */
export const MAX_HOME_SERVICE_ITEMS = 100_000;

const zipCode = z
  .string({ error: 'must be a ZIP code as a string, e.g. "80202"' })
  .trim()
  .regex(/^\d{5}(?:-\d{4})?$/, 'must be a 5-digit ZIP code, e.g. "80202"')
  .transform((zip) => zip.slice(0, 5));

export const homeServicesInput = z.object({
  keyword: z
    .preprocess(
      (v) => (typeof v === 'string' ? categorySlug(v) : v),
      z.enum(HOME_SERVICE_CATEGORIES, {
        error: ({ input }) =>
          input === undefined
            ? 'required: one category slug, e.g. "plumbing"'
            : typeof input !== 'string'
              ? 'must be a category slug as a string, e.g. "plumbing"'
              : input === ''
                ? 'must not be empty: one category slug, e.g. "plumbing"'
                : unknownCategoryMessage(input),
      }),
    )
    .describe(
      `One of the ${HOME_SERVICE_CATEGORIES.length} category slugs, e.g. ` +
        '"plumbing" or "air-duct-cleaning" (case and spaces are forgiven: "Air Duct Cleaning").',
    )
    .meta({ title: 'Service category', examples: ['plumbing'] }),
  zipCodes: z
    .array(zipCode, { error: 'must be a list of ZIP codes, e.g. ["80202", "80203"]' })
    .max(1_000, 'at most 1000 ZIP codes per run')
    .default([])
    .transform((zips) => [...new Set(zips)])
    .describe('5-digit ZIP codes; pros serving any of them are returned. Empty or absent means nationwide.')
    .meta({ title: 'ZIP codes', examples: [['80202']] }),
  maxItems: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(0, 'must be 0 (unlimited) or more')
    .max(MAX_HOME_SERVICE_ITEMS, `must be at most ${MAX_HOME_SERVICE_ITEMS}; use 0 for every listing`)
    .default(100)
    .describe('Listings to return; default 100; 0 means unlimited.')
    .meta({ title: 'Number of pros', examples: [100] }),
});
export type HomeServicesInput = z.output<typeof homeServicesInput>;

function formatAddress(pro: ServicePro): string {
  return [pro.street, pro.city, `${pro.state} ${pro.zip}`].filter(Boolean).join(', ');
}

function toRow(pro: ServicePro, zipCodes: string[]): Row {
  const served = new Set(pro.serviceZips);
  return {
    name: pro.name,
    category: pro.category,
    grade: pro.grade,
    rating: pro.rating,
    review_count: pro.reviewCount,
    phone: pro.phone,
    email: pro.email,
    website: pro.website,
    address: formatAddress(pro),
    street: pro.street,
    city: pro.city,
    state: pro.state,
    zip: pro.zip,
    hours: pro.hours,
    licensed: pro.licensed,
    insured: pro.insured,
    years_in_business: pro.yearsInBusiness,
    service_areas: pro.serviceZips,
    matched_zip_codes: zipCodes.filter((zip) => served.has(zip)),
    profile_url: pro.profileUrl,
  };
}

const where = (zipCodes: string[]) =>
  zipCodes.length === 0
    ? 'nationwide'
    : zipCodes.length === 1
      ? `serving ZIP ${zipCodes[0]}`
      : `serving any of ${zipCodes.length} ZIP codes`;

export const homeServicesTool = defineTool({
  name: 'home-services',
  title: 'Home services scraper',
  description:
    'Home-service professionals of one category (167 slugs), nationwide or by ZIP codes served: ' +
    'customer grade A to F, hours, licensing and insurance status, ' +
    'years in business, service areas and contact details.',
  rest: { path: '/api/v1/scrape/homeservices-scraper' },
  graphql: { mutation: 'startHomeServicesScrape', inputType: 'StartHomeServicesScrapeInput' },
  mcp: { name: 'scrape_home_services', toolset: 'directories' },
  example: { keyword: 'plumbing', zipCodes: ['80202'], maxItems: 100 },
  input: homeServicesInput,
  price: perResult('listing', '0.0099'),
  cancellable: true,
  notes: [
    'A keyword that is not a listed slug is refused with 400 validation_failed on `keyword`, ' +
      'suggesting the closest slugs by trigram similarity and edit distance; case, spaces, ' +
      'underscores and "&" are normalised first ("Air Duct Cleaning" runs as air-duct-cleaning).',
    'A pro matches the ZIP codes when its service area includes any of them; ' +
      '`matched_zip_codes` says which, and each pro appears once however many of the ZIP codes it serves.',
    'ZIP+4 codes are cut to their 5 digits and repeated ZIP codes are dropped; ' +
      'ZIP codes must be sent as strings, so leading zeros survive.',
    `\`maxItems: 0\` returns every matching listing; ` +
      `such a run holds the cost of ${MAX_HOME_SERVICE_ITEMS.toLocaleString('en-US')} ` +
      'listings (never more than the wallet holds) and is billed only for listings delivered.',
    'Listings come in catalog order (oldest entry first), ' +
      'so the same request returns the same listings until the catalog changes.',
    `Allowed keyword slugs: ${HOME_SERVICE_CATEGORIES.join(', ')}.`,
  ],
  identity: ['profile_url'],
  columns: [
    { key: 'name', header: 'name', description: 'Business name' },
    { key: 'category', header: 'category', description: 'Category slug searched' },
    { key: 'grade', header: 'grade', description: 'Customer grade, A to F (empty when not graded)' },
    { key: 'rating', header: 'rating', description: 'Average review rating, 1–5', type: cell.number },
    { key: 'review_count', header: 'review_count', description: 'Number of reviews', type: cell.int },
    { key: 'phone', header: 'phone', description: 'Phone number' },
    { key: 'email', header: 'email', description: 'Email address' },
    { key: 'website', header: 'website', description: 'Website URL' },
    { key: 'address', header: 'address', description: 'Full street address' },
    { key: 'street', header: 'street', description: 'Street and number' },
    { key: 'city', header: 'city', description: 'City' },
    { key: 'state', header: 'state', description: 'State abbreviation' },
    { key: 'zip', header: 'zip', description: 'ZIP code of the business address' },
    { key: 'hours', header: 'hours', description: 'Opening hours by weekday', type: cell.texts },
    { key: 'licensed', header: 'licensed', description: 'Holds a contractor licence', type: cell.bool },
    { key: 'insured', header: 'insured', description: 'Carries liability insurance', type: cell.bool },
    { key: 'years_in_business', header: 'years_in_business', description: 'Years in business', type: cell.int },
    { key: 'service_areas', header: 'service_areas', description: 'ZIP codes the pro serves', type: cell.texts },
    {
      key: 'matched_zip_codes',
      header: 'matched_zip_codes',
      description: 'Requested ZIP codes the pro serves (empty for nationwide searches)',
      type: cell.texts,
    },
    { key: 'profile_url', header: 'profile_url', description: 'Directory profile link' },
  ],
  requested: (input) => input.maxItems || MAX_HOME_SERVICE_ITEMS,
  describeStart(input) {
    const limit =
      input.maxItems === 0 ? 'every listing' : `up to ${input.maxItems} listing${input.maxItems === 1 ? '' : 's'}`;
    return { message: `Searching "${input.keyword}" pros ${where(input.zipCodes)}, ${limit}` };
  },
  async *run(ctx) {
    const { keyword, zipCodes, maxItems } = ctx.input;
    const limit = maxItems === 0 ? Number.POSITIVE_INFINITY : maxItems;
    let taken = 0;
    let afterId: number | undefined;
    while (taken < limit && !ctx.signal.aborted) {
      const page = await ctx.sources.homeServices.searchPros({
        category: keyword,
        zipCodes,
        limit: Math.min(PAGE_SIZE, limit - taken),
        afterId,
      });
      const last = page.at(-1);
      if (!last) break;
      afterId = last.id;
      taken += page.length;
      yield {
        rows: page.map((pro) => toRow(pro, zipCodes)),
        message: `"${keyword}": ${taken} listing${taken === 1 ? '' : 's'} found`,
        last: taken >= limit,
      };
    }
  },
});
