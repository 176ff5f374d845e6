import { combinations, type LocalReviewsInput } from '../local-reviews.ts';
import { isGoogleMapsLink } from './google-maps-links.ts';
import { defineUpstream, int, num, text } from './types.ts';

/** A Google Maps search link for a term in a location, the start URL form the actor reads for searches. */
const searchLink = (term: string, location: string) =>
  `https://www.google.com/maps/search/${encodeURIComponent(`${term} in ${location}`).replace(/%20/g, '+')}`;

/**
 * Local reviews on Apify's Google Maps Reviews Scraper (compass/Google-Maps-Reviews-Scraper): one
 * start URL per business URL (or per search term and location), `maxReviews` per place, newest first;
 * the actor has no places-per-search input, so `searchLimit` is kept over the rows (`limit`). Each item
 * is one review with its place's fields beside it.
 */
export const localReviewsUpstream = defineUpstream<LocalReviewsInput>({
  tool: 'local-reviews',
  defaultActor: 'compass~Google-Maps-Reviews-Scraper',
  actorUrl: 'https://apify.com/compass/Google-Maps-Reviews-Scraper',
  unavailableColumns: {
    search_term: 'the actor’s review items do not say which search found their place',
    location: 'the actor’s review items do not say which location found their place',
    direct_url: 'the actor’s review items do not say which start URL they came from',
  },
  input(input, maxItems) {
    const urls = input.directUrls ?? combinations(input).map(({ term, location }) => searchLink(term, location));
    return {
      startUrls: urls.map((url) => ({ url })),
      maxReviews: Math.min(input.maxReviewsPerBusiness, maxItems),
      reviewsSort: 'newest',
      language: 'en',
    };
  },
  unsupported(input) {
    // The actor reads reviews from map links: a business website is found only on the catalog.
    const websites = (input.directUrls ?? []).filter((url) => !isGoogleMapsLink(url));
    return websites.length > 0
      ? [`business websites as business URLs (${websites.join(', ')}): give their map links`]
      : [];
  },
  limit(input) {
    // The actor reviews every place a search link finds: the first `searchLimit` places of each search
    // are kept, in the order the actor gives them. An item that does not say its search counts toward
    // all of them together.
    if (input.directUrls) return () => true;
    const searches = combinations(input).length;
    const places = new Map<string, Set<string>>();
    return (row) => {
      const search = typeof row.search_term === 'string' ? row.search_term : '';
      const most = search ? input.searchLimit : input.searchLimit * searches;
      const place = String(row.place_id ?? row.business_url ?? row.business_name ?? '');
      const seen = places.get(search) ?? new Set<string>();
      places.set(search, seen);
      if (seen.has(place)) return true;
      if (seen.size >= most) return false;
      seen.add(place);
      return true;
    };
  },
  row(item, input) {
    const reviewId = text(item.reviewId);
    if (!reviewId) return null;
    const published = text(item.publishedAtDate);
    return {
      review_id: reviewId,
      author: text(item.name),
      rating: int(item.stars),
      text: text(item.text),
      date: published ? published.slice(0, 10) : null,
      business_name: text(item.title),
      business_category: text(item.categoryName),
      business_address: text(item.address),
      business_phone: text(item.phone),
      business_website: text(item.website),
      business_rating: num(item.totalScore),
      business_review_count: int(item.reviewsCount),
      place_id: text(item.placeId),
      business_url: text(item.url),
      search_term: input.directUrls ? null : text(item.searchString),
      location: null,
      direct_url: null,
    };
  },
});
