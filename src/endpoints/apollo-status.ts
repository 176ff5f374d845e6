import type { Config } from '../config.ts';

/** GET /api/v1/apollo-status: the lead scraper's current mode, from configuration. */
export function leadScraperStatus(config: Pick<Config, 'leadScraperMode'>, now: Date) {
  const message =
    config.leadScraperMode === 'url-based'
      ? 'The lead scraper reads people-search URLs in the older bracket format (e.g. ' +
        'personTitles[]=ceo); links in the newer format are refused.'
      : 'The lead scraper runs in legacy mode: ' +
        'searches are translated from the link and run against the lead database.';
  return { status: config.leadScraperMode, message, timestamp: now.toISOString() };
}
