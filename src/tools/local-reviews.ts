import { z } from 'zod';
import { parsePlace } from '../shared/geo.ts';
import { bareHost } from '../shared/hosts.ts';
import { parseMapLink, placeLink } from './lib/map-links.ts';
import type { Place, PlaceLookup, PlaceReview } from '../sources/types.ts';
import { formatAddress, placeLinkLookup } from './maps.ts';
import { perResult, type PriceRule } from '../billing/pricing.ts';
import { cell, defineTool, type Row } from './types.ts';
import { plural } from '../shared/text.ts';

/** Businesses looked up per source call. */
const PAGE_SIZE = 50;
/** Most review rows in one batch. */
const MAX_BATCH_ROWS = 500;
export const MAX_SEARCH_LIMIT = 50;

/** Where a business URL points: a place of the map catalog, or the business's own website. */
export function businessLookup(url: string): PlaceLookup {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('is not a URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error('must be an http(s) link');
  let link: ReturnType<typeof parseMapLink> | undefined;
  try {
    link = parseMapLink(url);
  } catch (err) {
    // Not a map link: the host names the business's website. A malformed place id is still an error.
    if (/place id/.test((err as Error).message)) throw err;
  }
  if (link?.kind === 'search')
    throw new Error('is a map search link, not a business; send its words as searchTerms and its place as locations');
  if (link) return placeLinkLookup(link);
  const host = bareHost(parsed.hostname);
  if (!host.includes('.')) throw new Error('has no website host; send a map place link or the business website');
  return { websiteHost: host };
}

const businessUrl = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(2_000)
  .superRefine((value, ctx) => {
    try {
      businessLookup(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

const words = (what: string) => z.string().trim().min(1, `${what} must not be empty`).max(200);

export const localReviewsInput = z
  .object({
    searchTerms: z
      .array(words('search terms'))
      .min(1)
      .max(20)
      .optional()
      .describe('Keywords matched against business names and categories, e.g. ["dentist"]; sent with locations.')
      .meta({ title: 'Search terms', examples: [['dentist']] }),
    locations: z
      .array(words('locations'))
      .min(1)
      .max(50)
      .optional()
      .describe('Cities or areas, e.g. ["Denver, CO", "80202"]; each search term is searched in each location.')
      .meta({ title: 'Locations', examples: [['Denver, CO']] }),
    directUrls: z
      .array(businessUrl)
      .min(1)
      .max(500)
      .optional()
      .describe(
        'Business URLs: map place links (e.g. ' +
          'the `url` column of the map-listing scraper) or the business website; skip the search.',
      )
      .meta({
        title: 'Business links',
        examples: [['https://www.google.com/maps/place/Smile+Dental/@39.74,-104.99,17z']],
      }),
    searchLimit: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(MAX_SEARCH_LIMIT, `must be at most ${MAX_SEARCH_LIMIT} per search-term and location combination`)
      .default(10)
      .describe('Businesses per search-term and location combination; default 10, at most 50.')
      .meta({ title: 'Businesses per search', examples: [10] }),
    maxReviewsPerBusiness: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(1_000, 'must be at most 1000')
      .default(20)
      .describe('Newest reviews read per business; default 20.')
      .meta({ title: 'Reviews per business', examples: [20] }),
  })
  .superRefine((input, ctx) => {
    const searching = input.searchTerms !== undefined || input.locations !== undefined;
    if (input.directUrls && searching) {
      ctx.addIssue({
        code: 'custom',
        path: ['directUrls'],
        message: 'send either directUrls, or searchTerms with locations; not both',
      });
    } else if (!input.directUrls && !searching) {
      ctx.addIssue({ code: 'custom', path: [], message: 'send either directUrls, or searchTerms with locations' });
    } else if (input.searchTerms && !input.locations) {
      ctx.addIssue({
        code: 'custom',
        path: ['locations'],
        message: 'required with searchTerms: the cities or areas to search, e.g. ["Denver, CO"]',
      });
    } else if (input.locations && !input.searchTerms) {
      ctx.addIssue({
        code: 'custom',
        path: ['searchTerms'],
        message: 'required with locations: the keywords to search, e.g. ["dentist"]',
      });
    }
  });
export type LocalReviewsInput = z.output<typeof localReviewsInput>;

interface Combination {
  term: string;
  location: string;
}

const distinct = (values: string[]) => {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = v.toLowerCase().replace(/\s+/g, ' ');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};

/** Each distinct search term in each distinct location, terms first. */
export function combinations(input: LocalReviewsInput): Combination[] {
  if (!input.searchTerms || !input.locations) return [];
  const locations = distinct(input.locations);
  return distinct(input.searchTerms).flatMap((term) => locations.map((location) => ({ term, location })));
}

/** Businesses the run may read: one per direct URL, or searchLimit per combination. */
const businessesRequested = (input: LocalReviewsInput) =>
  input.directUrls?.length ?? combinations(input).length * input.searchLimit;

const perReview = perResult('review', '0.0099', (each) => `${each} per result (one review row)`);

/** Per result, a result being one review; the hold covers maxReviewsPerBusiness reviews of every business requested. */
const price: PriceRule<LocalReviewsInput> = {
  ...perReview,
  estimate: (input, businesses) => perReview.unitMicros * BigInt(businesses) * BigInt(input.maxReviewsPerBusiness),
};

interface Origin {
  search_term: string | null;
  location: string | null;
  direct_url: string | null;
}

function toRow(review: PlaceReview, place: Place, origin: Origin): Row {
  return {
    review_id: review.reviewId,
    author: review.author,
    rating: review.rating,
    text: review.text,
    date: review.date,
    business_name: place.name,
    business_category: place.category,
    business_address: formatAddress(place),
    business_phone: place.phone,
    business_website: place.website,
    business_rating: place.rating,
    business_review_count: place.reviewCount,
    place_id: place.placeId,
    business_url: placeLink(place.placeId),
    ...origin,
  };
}

export const localReviewsTool = defineTool({
  name: 'local-reviews',
  title: 'Local reviews scraper',
  description:
    'Reviews of local businesses (author, rating, text, date) with their business (name, address, ' +
    'phone, website, rating, place id), found by search terms in locations or by business URLs.',
  rest: { path: '/api/v1/scrape/localreviews-scraper' },
  graphql: { mutation: 'startLocalReviewsScrape', inputType: 'StartLocalReviewsScrapeInput' },
  mcp: { name: 'scrape_local_reviews', toolset: 'maps', openWorld: true },
  example: { searchTerms: ['dentist'], locations: ['Denver, CO'], searchLimit: 10 },
  input: localReviewsInput,
  price,
  cancellable: true,
  notes: [
    'Send either directUrls, or searchTerms with locations; both, neither, ' +
      'or one of searchTerms and locations without the other is refused with 400 validation_failed.',
    'Each result row is one review with its business; a result is one review, ' +
      `so the price is ${price.each} per review row, and a business without reviews produces no row and costs nothing.`,
    'searchLimit counts businesses: each distinct search term is searched in each distinct location ' +
      '(terms first, in the order sent), and each combination reads up to searchLimit businesses (default 10, ' +
      'at most 50); searchLimit is ignored with directUrls, where each URL names one business.',
    'maxReviewsPerBusiness (default 20) caps the reviews read per business, newest first; ' +
      'the run holds the cost of that many reviews for every business ' +
      'requested and is billed only for the reviews delivered.',
    'Search terms match business names and categories, stemmed ("dentists" finds a Dentist); ' +
      'locations read like the map-listing scraper\'s locationQuery ("Denver, ' +
      'CO", "Colorado", "80202"); businesses come in catalog order.',
    'A directUrl is a map place link (by place id, e.g. the `url` column of the map-listing scraper ' +
      'or `business_url` here, or /maps/place/<name>/@lat,lng,zoom, found by name, ' +
      "nearest to the link's point when it has one) or any other URL whose host is the business's " +
      'website (scheme, "www." and path are ignored; ' +
      'a website shared by several locations gives its oldest catalog entry).',
    'A map search link is not a business and is refused in directUrls; ' +
      'a directUrl that matches no business in the catalog produces no row.',
    'A business found by several combinations or URLs is returned once, under the first; ' +
      "it does not count towards the later combinations' searchLimit.",
    "The run's `requested` and `handled` count businesses (one per directUrl, " +
      "or searchLimit per combination); the number of review rows is the run's item count.",
  ],
  identity: ['review_id'],
  columns: [
    { key: 'review_id', header: 'review_id', description: 'Stable review identifier' },
    { key: 'author', header: 'author', description: 'Reviewer name as shown' },
    { key: 'rating', header: 'rating', description: 'Stars given, 1–5', type: cell.int },
    { key: 'text', header: 'text', description: 'Review text' },
    { key: 'date', header: 'date', description: 'Date published, YYYY-MM-DD' },
    { key: 'business_name', header: 'business_name', description: 'Business reviewed' },
    { key: 'business_category', header: 'business_category', description: 'Main category of the business' },
    { key: 'business_address', header: 'business_address', description: 'Full street address of the business' },
    { key: 'business_phone', header: 'business_phone', description: 'Phone number of the business' },
    { key: 'business_website', header: 'business_website', description: 'Website of the business' },
    {
      key: 'business_rating',
      header: 'business_rating',
      description: 'Average rating of the business, 1–5',
      type: cell.number,
    },
    {
      key: 'business_review_count',
      header: 'business_review_count',
      description: 'Number of reviews of the business',
      type: cell.int,
    },
    { key: 'place_id', header: 'place_id', description: 'Stable place identifier of the business' },
    { key: 'business_url', header: 'business_url', description: 'Map link of the business (by place id)' },
    { key: 'search_term', header: 'search_term', description: 'Search term that found the business (searches only)' },
    { key: 'location', header: 'location', description: 'Location searched (searches only)' },
    {
      key: 'direct_url',
      header: 'direct_url',
      description: 'The directUrl that named the business (direct URLs only)',
    },
  ],
  requested: businessesRequested,
  describeStart(input) {
    if (input.directUrls) {
      return {
        message:
          `Reading up to ${input.maxReviewsPerBusiness} reviews of ` +
          `each of ${plural(input.directUrls.length, 'business URL')}`,
      };
    }
    const combos = combinations(input).length;
    return {
      message:
        `Reading up to ${input.maxReviewsPerBusiness} reviews of up to ` +
        `${plural(input.searchLimit, 'business')} for each of ${plural(combos, 'search combination')}`,
    };
  },
  async *run(ctx) {
    const { input } = ctx;
    const source = ctx.sources.localBusinesses;
    const seen = new Set<string>();
    let businesses = 0;
    let reviews = 0;

    /** Reads the reviews of new businesses and yields them in batches; `handled` is the businesses dealt with. */
    async function* reviewsOf(found: { place: Place; origin: Origin }[], handled: number) {
      const fresh: typeof found = [];
      for (const f of found) {
        if (seen.has(f.place.placeId)) continue;
        seen.add(f.place.placeId);
        fresh.push(f);
      }
      businesses += fresh.length;
      const byPlace = new Map(fresh.map((f) => [f.place.placeId, f]));
      const list = await source.latestReviews([...byPlace.keys()], input.maxReviewsPerBusiness);
      const rows = list.flatMap((review) => {
        const asked = byPlace.get(review.placeId);
        return asked ? [toRow(review, asked.place, asked.origin)] : [];
      });
      reviews += rows.length;
      const message = `${plural(businesses, 'business')} found, ${plural(reviews, 'review')} read`;
      if (rows.length === 0) yield { rows, handled, message };
      for (let i = 0; i < rows.length; i += MAX_BATCH_ROWS) {
        yield { rows: rows.slice(i, i + MAX_BATCH_ROWS), handled: i === 0 ? handled : 0, message };
      }
    }

    if (input.directUrls) {
      for (let i = 0; i < input.directUrls.length && !ctx.signal.aborted; i += PAGE_SIZE) {
        const urls = input.directUrls.slice(i, i + PAGE_SIZE);
        const found: { place: Place; origin: Origin }[] = [];
        const places = await source.findPlaces(urls.map(businessLookup));
        urls.forEach((url, n) => {
          const place = places[n];
          if (place) found.push({ place, origin: { search_term: null, location: null, direct_url: url } });
        });
        yield* reviewsOf(found, urls.length);
      }
      return;
    }

    for (const { term, location } of combinations(input)) {
      const area = parsePlace(location);
      let taken = 0;
      let afterId: number | undefined;
      while (taken < input.searchLimit && !ctx.signal.aborted) {
        const page = await source.searchPlaces({
          keyword: term,
          area,
          limit: Math.min(PAGE_SIZE, input.searchLimit - taken),
          afterId,
        });
        const last = page.at(-1);
        if (!last) break;
        afterId = last.id;
        const found = page
          .filter((place) => !seen.has(place.placeId))
          .map((place) => ({ place, origin: { search_term: term, location, direct_url: null } }));
        taken += found.length;
        yield* reviewsOf(found, found.length);
      }
    }
  },
});
