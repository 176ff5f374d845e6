import type { BusinessForSaleInput } from '../business-for-sale.ts';
import { parseBusinessLink } from '../lib/listings/business-links.ts';
import { defineUpstream, num, text } from './types.ts';

/** The actor's own search page; what to search is its `keyword` and `location`. */
const SEARCH_PAGE = 'https://www.bizquest.com/businesses-for-sale/';

/**
 * Business for sale on BizQuest Scraper (crawlerbros/bizquest-scraper), which searches by keyword and
 * location: the first search URL's industry becomes `keyword` and its city and state `location`;
 * further URLs, listing URLs, price ranges and `datasetName` are not applied upstream
 * (docs/upstream.md). `maxItems` is the bound.
 */
export const businessForSaleUpstream = defineUpstream<BusinessForSaleInput>({
  tool: 'business-for-sale',
  defaultActor: 'crawlerbros~bizquest-scraper',
  unavailableColumns: {
    industry: 'on the listing page only (fetchDetails), not switched on',
    country: 'not among the actor’s output fields (the site lists US businesses)',
    ebitda: 'not among the actor’s output fields',
    established: 'on the listing page only (fetchDetails), not switched on',
    employees: 'on the listing page only (fetchDetails), not switched on',
    description: 'the actor gives a short description only on the listing page (fetchDetails), not switched on',
    broker_name: 'on the listing page only (fetchDetails), not switched on',
    broker_firm: 'on the listing page only (fetchDetails), not switched on',
    broker_phone: 'on the listing page only (fetchDetails), not switched on',
    broker_email: 'not published by the site',
    listed_at: 'not among the actor’s output fields',
    start_url: 'the actor’s items do not say which start URL found them',
  },
  actorUrl: 'https://apify.com/crawlerbros/bizquest-scraper',
  input(input, maxItems) {
    const search = input.startUrls.map(parseBusinessLink).find((link) => link.kind === 'search');
    const filters = search?.kind === 'search' ? search.filters : {};
    const location = filters.city ? `${filters.city}, ${filters.state ?? ''}`.replace(/, $/, '') : filters.state;
    return {
      startUrls: [SEARCH_PAGE],
      ...(filters.industry ? { keyword: filters.industry.replace(/-/g, ' ') } : {}),
      ...(location ? { location } : {}),
      fetchDetails: false,
      maxItems: Math.min(input.maxItems, maxItems),
    };
  },
  row(item) {
    const listingId = text(item.listingId) ?? (typeof item.listingId === 'number' ? String(item.listingId) : null);
    const title = text(item.title);
    if (!listingId || !title) return null;
    return {
      listing_id: listingId,
      title,
      industry: null,
      location: text(item.location),
      city: text(item.city),
      state: text(item.state),
      country: null,
      asking_price: num(item.askingPrice),
      revenue: num(item.grossRevenue),
      ebitda: null,
      cash_flow: num(item.cashFlow),
      established: null,
      employees: null,
      description: null,
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
