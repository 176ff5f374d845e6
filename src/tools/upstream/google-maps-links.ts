/**
 * The links Google Maps actors take as start URLs (the Google Maps Scraper's `startUrls` description):
 * Google Maps search and place links, `?cid=` links and short maps links.
 */
const GOOGLE_MAPS_LINKS = [
  /^https?:\/\/(?:www\.)?google\.[a-z.]+\/maps\//i,
  /^https?:\/\/maps\.google\.[a-z.]+\//i,
  /^https?:\/\/(?:www\.)?google\.[a-z.]+\/?\?(?:.*&)?cid=/i,
  /^https?:\/\/(?:goo\.gl\/maps|maps\.app\.goo\.gl)\//i,
];

/** Whether a start URL is one of them. */
export const isGoogleMapsLink = (url: string) => GOOGLE_MAPS_LINKS.some((pattern) => pattern.test(url));
