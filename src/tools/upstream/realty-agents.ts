import type { RealtyAgentsInput } from '../realty-agents.ts';
import { defineUpstream, int, num, text } from './types.ts';

/**
 * Realty agents on Realtor Agent Scraper (ahmed_jasarevic/realtor-agent-scraper): the location is the
 * actor's one `locations` entry, `maxAgents` the bound, profiles enriched for email and phone. The
 * actor has no specialty or language filter, so neither is sent (docs/upstream.md).
 */
export const realtyAgentsUpstream = defineUpstream<RealtyAgentsInput>({
  tool: 'realty-agents',
  defaultActor: 'ahmed_jasarevic~realtor-agent-scraper',
  actorUrl: 'https://apify.com/ahmed_jasarevic/realtor-agent-scraper',
  input(input, maxItems) {
    return { locations: [input.location], maxAgents: Math.min(input.searchLimit, maxItems), enrichProfiles: true };
  },
  row(item) {
    const name = text(item.fullName);
    if (!name) return null;
    return {
      name,
      brokerage: text(item.brokerName) ?? text(item.officeName),
      license_number: null,
      phone: text(item.primaryPhone),
      email: text(item.email),
      city: text(item.city),
      state: text(item.stateCode),
      zip: null,
      specialties: null,
      specialty_codes: null,
      languages: null,
      years_experience: null,
      rating: num(item.rating),
      review_count: int(item.reviewCount),
      sales_last_12_months: int(item.recentlySoldCount),
      price_range_min: null,
      price_range_max: null,
      profile_url: text(item.profileUrl),
    };
  },
});
