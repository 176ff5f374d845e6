import { US_STATES } from '../../shared/geo.ts';
import type { BusinessForSaleInput } from '../business-for-sale.ts';
import { type BusinessSearchFilters, parseBusinessLink } from '../lib/listings/business-links.ts';
import type { Range } from '../lib/listings/links.ts';
import { defineUpstream, num, text } from './types.ts';

const SITE = 'https://www.bizquest.com';

/** A slug as BizQuest writes its paths: lowercase words joined by hyphens. */
const slug = (words: string) =>
  words
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

/**
 * The BizQuest search page of a search link's place and industry, the form the actor's README gives
 * for filters it has no input for: `/<industry or "businesses">-for-sale[-in-<city or state name>-<st>]/`
 * (`/businesses-for-sale-in-miami-fl/`, `/restaurants-for-sale-in-california-ca/`).
 */
function searchPage(filters: BusinessSearchFilters): string {
  const what = filters.industry ? slug(filters.industry) : 'businesses';
  const state = filters.state?.toLowerCase();
  const place = filters.city
    ? `${slug(filters.city)}-${state}`
    : filters.state
      ? `${slug(US_STATES[filters.state] ?? filters.state)}-${state}`
      : undefined;
  return `${SITE}/${what}-for-sale${place ? `-in-${place}` : ''}/`;
}

/** The search links of a run's input, read once per input (each dataset item asks for them). */
const searchesOf = new WeakMap<BusinessForSaleInput, ReturnType<typeof readSearches>>();
const readSearches = (input: BusinessForSaleInput) =>
  input.startUrls.map(parseBusinessLink).flatMap((link) => (link.kind === 'search' ? [link] : []));
const searches = (input: BusinessForSaleInput) => {
  const known = searchesOf.get(input);
  if (known) return known;
  const found = readSearches(input);
  searchesOf.set(input, found);
  return found;
};

const within = (value: number | null, range: Range | undefined) =>
  !range ||
  (value !== null &&
    (range.min === undefined || value >= range.min) &&
    (range.max === undefined || value <= range.max));

/**
 * Business for sale on BizQuest Scraper (crawlerbros/bizquest-scraper). The actor's filter inputs take a
 * keyword (which BizQuest's browse page often ignores) and a state; its README asks for city, industry
 * and combined filters as BizQuest search URLs in `startUrls`. So each search link becomes the BizQuest
 * search page of its place and industry, and nothing else is sent: not the nationwide browse page (the
 * schema's default start URL), not `keyword` or `location`. Asking-price and cash-flow ranges are
 * applied to the items (skipped, never billed); ranges on revenue or EBITDA, which the cards do not
 * show, and single-listing links are refused at start. `maxItems` is the bound.
 */
export const businessForSaleUpstream = defineUpstream<BusinessForSaleInput>({
  tool: 'business-for-sale',
  defaultActor: 'crawlerbros~bizquest-scraper',
  unavailableColumns: {
    industry: 'on the listing page only (fetchDetails), not switched on',
    country: 'not among the actor’s output fields (the site lists US businesses)',
    revenue:
      'on the listing page only (fetchDetails, which the actor calls experimental: BizQuest blocks most ' +
      'detail pages), not switched on',
    ebitda: 'on the listing page only (fetchDetails), not switched on',
    established: 'on the listing page only (fetchDetails), not switched on',
    employees: 'on the listing page only (fetchDetails), not switched on',
    broker_name: 'on the listing page only (fetchDetails), not switched on',
    broker_firm: 'on the listing page only (fetchDetails), not switched on',
    broker_phone: 'on the listing page only (fetchDetails), not switched on',
    broker_email: 'not published by the site',
    listed_at: 'not among the actor’s output fields',
    start_url: 'the actor’s items do not say which start URL found them',
  },
  actorUrl: 'https://apify.com/crawlerbros/bizquest-scraper',
  input(input, maxItems) {
    const pages = [...new Set(searches(input).map((link) => searchPage(link.filters)))];
    return {
      startUrls: pages,
      fetchDetails: false,
      maxItems: Math.min(input.maxItems, maxItems, 10_000),
    };
  },
  unsupported(input) {
    const links = input.startUrls.map(parseBusinessLink);
    const refused: string[] = [];
    const listings = links.filter((link) => link.kind === 'listing').map((link) => link.url);
    if (listings.length > 0) refused.push(`single listing links (${listings.join(', ')}): give search links`);
    const hidden = searches(input).filter((link) => link.filters.revenue || link.filters.ebitda);
    if (hidden.length > 0)
      refused.push(
        `revenue or EBITDA ranges (${hidden.map((link) => link.url).join(', ')}), ` +
          'which listings show only on their own pages',
      );
    const noState = searches(input).filter((link) => link.filters.city && !link.filters.state);
    if (noState.length > 0) refused.push(`a city without its state (${noState.map((link) => link.url).join(', ')})`);
    return refused;
  },
  row(item, input) {
    const listingId = text(item.listingId) ?? (typeof item.listingId === 'number' ? String(item.listingId) : null);
    const title = text(item.title);
    if (!listingId || !title) return null;
    const askingPrice = num(item.askingPrice);
    const cashFlow = num(item.cashFlow);
    // The item's search link is not known: it is kept when some search link's ranges admit it.
    const admitted = searches(input).some(
      ({ filters }) => within(askingPrice, filters.askingPrice) && within(cashFlow, filters.cashFlow),
    );
    if (!admitted) return null;
    return {
      listing_id: listingId,
      title,
      industry: null,
      location: text(item.location),
      city: text(item.city),
      state: text(item.state),
      country: null,
      asking_price: askingPrice,
      revenue: null,
      ebitda: null,
      cash_flow: cashFlow,
      established: null,
      employees: null,
      description: text(item.shortDescription) ?? text(item.description),
      broker_name: null,
      broker_firm: null,
      broker_phone: null,
      broker_email: null,
      listed_at: null,
      listing_url: text(item.url),
      start_url: null,
    };
  },
});
