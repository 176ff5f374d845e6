import { z } from 'zod';
import {
  BUSINESS_LINK_FORMS,
  matchIndustries,
  parseBusinessLink,
  type BusinessLink,
} from './lib/listings/business-links.ts';
import { countOf, dollarRange } from './lib/listings/links.ts';
import type { BusinessListing } from '../sources/business-listings.ts';
import { perResult } from '../billing/pricing.ts';
import { cell, defineTool, type Row, type RunBatch, type RunContext } from './types.ts';

/** The spec's "extract all available" value of maxItems. */
export const ALL_ITEMS = 99_999;
const PAGE_SIZE = 250;
/** Single-listing links looked up together. */
const LOOKUP_BATCH = 100;

const businessLink = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    try {
      parseBusinessLink(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

export const businessForSaleInput = z.object({
  startUrls: z
    .array(businessLink)
    .min(1, `give at least one URL; ${BUSINESS_LINK_FORMS}`)
    .max(100, 'at most 100 URLs per request')
    .describe(
      'Search-page or single-listing URLs of the listing site, any host: ' +
        '/businesses-for-sale[/<state or city-st>][/<industry>] with optional price_min, ' +
        'price_max, cash_flow_min, cash_flow_max, revenue_min, revenue_max, ebitda_min, ' +
        'ebitda_max, state, city, location and industry query parameters, ' +
        'or /business-opportunity/<slug>/<listing id>.',
    )
    .meta({ title: 'Listing-site links', examples: [['https://www.bizlistings.net/businesses-for-sale/colorado']] }),
  maxItems: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(ALL_ITEMS, `must be at most ${ALL_ITEMS} (${ALL_ITEMS} extracts all available)`)
    .default(100)
    .describe(`Listings to extract in all, over every URL; default 100; ${ALL_ITEMS} extracts all available.`)
    .meta({ title: 'Number of listings', examples: [100] }),
  datasetName: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'at most 100 characters')
    .optional()
    .describe(
      "Deduplicates across the account's runs that share the name: " +
        'listings an earlier run of the dataset delivered are skipped and not billed.',
    )
    .meta({ title: 'Dataset name', examples: ['colorado-listings'] }),
});
export type BusinessForSaleInput = z.output<typeof businessForSaleInput>;

const links = (input: BusinessForSaleInput) => input.startUrls.map(parseBusinessLink);
const limitOf = (input: BusinessForSaleInput) =>
  input.maxItems === ALL_ITEMS ? Number.POSITIVE_INFINITY : input.maxItems;

/** How each start URL was read, for the start response. */
function translation(link: BusinessLink) {
  return link.kind === 'listing'
    ? { url: link.url, kind: 'listing', listingId: link.listingId }
    : { url: link.url, kind: 'search', filters: link.filters, ignored: link.ignored };
}

const location = (l: BusinessListing) => [l.city, l.state].filter(Boolean).join(', ') || null;

function toRow(l: BusinessListing, startUrl: string): Row {
  return {
    listing_id: /\/(\d+)\/?$/.exec(l.listingUrl)?.[1] ?? null,
    title: l.title,
    industry: l.category,
    location: location(l),
    city: l.city,
    state: l.state,
    country: l.country,
    asking_price: l.askingPrice,
    revenue: l.revenue,
    ebitda: l.ebitda,
    cash_flow: l.cashFlow,
    established: l.established,
    employees: l.employees,
    description: l.description,
    broker_name: l.brokerName,
    broker_firm: l.brokerCompany,
    broker_phone: l.brokerPhone,
    broker_email: l.brokerEmail,
    listed_at: l.listedAt,
    listing_url: l.listingUrl,
    start_url: startUrl,
  };
}

interface Progress {
  taken: number;
  skipped: number;
  /** Listing URLs this run has seen, delivered or skipped. */
  seen: Set<string>;
}

/**
 * Picks, in order, the listings this run delivers: new to the run, and to the named dataset when
 * there is one. Claims no more than the run can still take, so a listing is never claimed without
 * being delivered.
 */
async function deliver(
  ctx: RunContext<BusinessForSaleInput>,
  progress: Progress,
  found: { listing: BusinessListing; startUrl: string }[],
  note = '',
): Promise<RunBatch> {
  const limit = limitOf(ctx.input);
  const dataset = ctx.input.datasetName;
  // The same listing may be asked for twice in one batch (two links with one listing id): the first counts.
  const firsts = new Map<string, (typeof found)[number]>();
  for (const f of found)
    if (!progress.seen.has(f.listing.listingUrl) && !firsts.has(f.listing.listingUrl))
      firsts.set(f.listing.listingUrl, f);
  let candidates = [...firsts.values()];
  const rows: Row[] = [];
  while (candidates.length > 0 && progress.taken + rows.length < limit) {
    const slice = candidates.slice(0, limit - progress.taken - rows.length);
    candidates = candidates.slice(slice.length);
    const built = slice.map(({ listing, startUrl }) => toRow(listing, startUrl));
    const fresh = dataset ? await ctx.store.claimNew(dataset, built) : built.map(() => true);
    slice.forEach(({ listing }, i) => {
      progress.seen.add(listing.listingUrl);
      const row = built[i];
      if (row && fresh[i]) rows.push(row);
      else progress.skipped += 1;
    });
  }
  progress.taken += rows.length;
  const skipped =
    dataset && progress.skipped > 0 ? `; ${progress.skipped} skipped as already in dataset "${dataset}"` : '';
  return { rows, message: `${countOf(progress.taken, 'listing')} extracted${skipped}${note}` };
}

export const businessForSaleTool = defineTool({
  name: 'business-for-sale',
  title: 'Business-for-sale scraper',
  description:
    'Businesses for sale from search pages or single listings of the listing site: ' +
    'asking price, revenue, EBITDA, cash flow, industry, location and the broker contact.',
  rest: { path: '/api/v1/scrape/bizforsale-scraper' },
  graphql: { mutation: 'startBusinessForSaleScrape', inputType: 'StartBusinessForSaleScrapeInput' },
  mcp: { name: 'scrape_businesses_for_sale', toolset: 'listings', openWorld: true },
  example: { startUrls: ['https://www.bizlistings.net/businesses-for-sale/colorado'], maxItems: 100 },
  input: businessForSaleInput,
  price: perResult('listing', '0.0099'),
  cancellable: true,
  notes: [
    'Links of any host are read by their path: /businesses-for-sale is a search page and ' +
      '/business-opportunity/<slug>/<listing id> a single listing; ' +
      'any other link is refused with 400 validation_failed naming startUrls.<i> and listing the accepted forms.',
    'On a search page the first segment after /businesses-for-sale is the location ("all", ' +
      'a state such as colorado, new-york or co, or a city with its state code such as denver-co) ' +
      'and the next one the industry; a lone segment that is not a location is the industry.',
    'An industry matches every catalog industry containing all its words, ignoring case, "and", ' +
      '"&" and plurals: restaurants, restaurants-food and restaurants-and-food all mean "Restaurants & Food".',
    'Query parameters of a search page add or replace filters: price_min/price_max (asking price), ' +
      'cash_flow_min/cash_flow_max, revenue_min/revenue_max, ebitda_min/ebitda_max in whole dollars (250000, ' +
      '250,000 or 250k), plus state, city, location ("Denver, CO") and industry; ' +
      'paging, sorting and tracking parameters are ignored, ' +
      'and any other parameter is listed under url_translation[].ignored in the start response.',
    'A single listing is found by the listing id at the end of its link, whatever the host or slug; ' +
      'a listing that does not exist yields no row and costs nothing.',
    'maxItems counts listings over all URLs together, which are read in the order given (search ' +
      'results in catalog order); 99999 extracts every available listing, and requested then shows 99999.',
    'A listing reached from two URLs of the same run is delivered once, from the first.',
    "With datasetName, listings an earlier run of the account's dataset of that name delivered are skipped, " +
      "neither returned nor billed nor counted toward maxItems; other accounts' datasets never interfere.",
  ],
  identity: ['listing_url'],
  columns: [
    { key: 'listing_id', header: 'listing_id', description: 'Listing id from the listing URL' },
    { key: 'title', header: 'title', description: 'Listing title' },
    { key: 'industry', header: 'industry', description: 'Industry the business is listed under' },
    { key: 'location', header: 'location', description: 'City and state, e.g. "Denver, CO"' },
    { key: 'city', header: 'city', description: 'City' },
    { key: 'state', header: 'state', description: 'State code' },
    { key: 'country', header: 'country', description: 'ISO country code' },
    { key: 'asking_price', header: 'asking_price', description: 'Asking price, USD', type: cell.usd },
    { key: 'revenue', header: 'revenue', description: 'Yearly gross revenue, USD', type: cell.usd },
    { key: 'ebitda', header: 'ebitda', description: 'Yearly EBITDA, USD', type: cell.usd },
    {
      key: 'cash_flow',
      header: 'cash_flow',
      description: "Yearly cash flow (seller's discretionary earnings), USD",
      type: cell.usd,
    },
    { key: 'established', header: 'established', description: 'Year the business was established', type: cell.int },
    { key: 'employees', header: 'employees', description: 'Number of employees', type: cell.int },
    { key: 'description', header: 'description', description: 'Listing description' },
    { key: 'broker_name', header: 'broker_name', description: 'Listing broker' },
    { key: 'broker_firm', header: 'broker_firm', description: "Broker's firm" },
    { key: 'broker_phone', header: 'broker_phone', description: "Broker's phone" },
    { key: 'broker_email', header: 'broker_email', description: "Broker's email" },
    { key: 'listed_at', header: 'listed_at', description: 'Date listed, YYYY-MM-DD' },
    { key: 'listing_url', header: 'listing_url', description: 'Listing URL' },
    { key: 'start_url', header: 'start_url', description: 'The start URL that found the listing' },
  ],
  requested(input) {
    const parsed = links(input);
    if (parsed.some((l) => l.kind === 'search')) return input.maxItems;
    return Math.min(input.maxItems, new Set(parsed.map((l) => (l.kind === 'listing' ? l.listingId : ''))).size);
  },
  startDetails: z.object({
    url_translation: z
      .array(
        z
          .object({
            url: z.string().describe('The URL sent.'),
            kind: z.enum(['listing', 'search']).describe('listing (one listing) or search (a search page).'),
            listingId: z.string().optional().describe('The listing id of a listing URL.'),
            filters: z
              .object({
                state: z.string().optional().describe('Two-letter state code.'),
                city: z.string().optional().describe('City, in slug words ("salt lake city").'),
                industry: z.string().optional().describe('Industry as written in the link.'),
                askingPrice: dollarRange.optional().describe('Asking price.'),
                cashFlow: dollarRange.optional().describe('Cash flow.'),
                revenue: dollarRange.optional().describe('Revenue.'),
                ebitda: dollarRange.optional().describe('EBITDA.'),
              })
              .optional()
              .describe('The filters a search URL was read as.'),
            ignored: z.array(z.string()).optional().describe('Query parameters of a search URL that were ignored.'),
          })
          .describe('How one URL was read.'),
      )
      .describe('How each URL was read, in order.'),
  }),
  describeStart(input) {
    const parsed = links(input);
    const amount =
      input.maxItems === ALL_ITEMS ? 'all available listings' : `up to ${countOf(input.maxItems, 'listing')}`;
    const dataset = input.datasetName ? `, skipping listings already in dataset "${input.datasetName}"` : '';
    return {
      message: `Extracting ${amount} from ${countOf(parsed.length, 'URL')}${dataset}`,
      extra: { url_translation: parsed.map(translation) },
    };
  },
  async *run(ctx) {
    const source = ctx.sources.businessListings;
    const parsed = links(ctx.input);
    const limit = limitOf(ctx.input);
    const progress: Progress = { taken: 0, skipped: 0, seen: new Set() };
    let industries: string[] | undefined;

    for (let i = 0; i < parsed.length && progress.taken < limit && !ctx.signal.aborted; ) {
      const link = parsed[i];
      if (!link) break;
      if (link.kind === 'listing') {
        const group: Extract<BusinessLink, { kind: 'listing' }>[] = [];
        for (let next = parsed[i]; next?.kind === 'listing' && group.length < LOOKUP_BATCH; next = parsed[++i])
          group.push(next);
        const byId = await source.findListings(group.map((l) => ({ url: l.url, listingId: l.listingId })));
        // Each listing keeps the link that asked for it, in the order given.
        const found = group.flatMap((l) => {
          const listing = byId.get(l.listingId);
          return listing ? [{ listing, startUrl: l.url }] : [];
        });
        const missing = group.filter((l) => !byId.has(l.listingId)).map((l) => l.listingId);
        yield await deliver(
          ctx,
          progress,
          found,
          missing.length > 0 ? `; not found: listing ${missing.join(', ')}` : '',
        );
        continue;
      }
      i += 1;
      const { filters } = link;
      let matched: string[] | undefined;
      if (filters.industry) {
        industries ??= await source.industries();
        matched = matchIndustries(filters.industry, industries);
        if (matched.length === 0) {
          yield {
            rows: [],
            message: `No industry matches "${filters.industry}"; industries: ${industries.join(', ')}`,
          };
          continue;
        }
      }
      let afterId: number | undefined;
      while (progress.taken < limit && !ctx.signal.aborted) {
        const wanted = limit - progress.taken;
        const page = await source.searchListings({
          state: filters.state,
          city: filters.city,
          industries: matched,
          askingPrice: filters.askingPrice,
          cashFlow: filters.cashFlow,
          revenue: filters.revenue,
          ebitda: filters.ebitda,
          limit: Math.min(PAGE_SIZE, ctx.input.datasetName ? Math.max(wanted, 50) : wanted),
          afterId,
        });
        const last = page.at(-1);
        if (!last) break;
        afterId = last.id;
        yield await deliver(
          ctx,
          progress,
          page.map((listing) => ({ listing, startUrl: link.url })),
        );
      }
    }
  },
});
