/**
 * An example start body per tool (by tool name), shown in the OpenAPI document. test/openapi.test.ts
 * checks each one passes its tool's input schema and start rules, and that every routed tool has one.
 */
export const TOOL_EXAMPLES: Record<string, Record<string, unknown>> = {
  maps: { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 100 },
  'lead-scraper': {
    url: 'https://app.apollo.io/#/people?personTitles[]=ceo&personLocations[]=United%20States&organizationNumEmployeesRanges[]=11,50',
    count: 1000,
    fileName: 'us-ceos',
  },
  'mobile-finder': { inputs: ['https://www.linkedin.com/in/jane-doe', 'jane.doe@acme.com'] },
  'home-services': { keyword: 'plumbing', zipCodes: ['80202'], maxItems: 100 },
  'realty-agents': { location: 'Denver, CO', specialty: '1001', searchLimit: 10 },
  'criminal-records': { name: 'John Smith', state: 'CO', dob: '1980-04-12' },
  'people-finder': { name: 'Jane Doe', city: 'Denver', state: 'CO' },
  'business-for-sale': { startUrls: ['https://www.bizlistings.net/businesses-for-sale/colorado'], maxItems: 100 },
  'commercial-property': { startUrls: ['https://www.crelistings.net/search?location=Denver%2C%20CO'] },
  'property-lookup': { addresses: ['1600 Pennsylvania Ave NW, Washington, DC 20500'], includeOwnerContact: true },
  'deal-finder': { location: 'Denver, CO', minDiscountPercent: 10, maxItems: 100 },
  'local-reviews': { searchTerms: ['dentist'], locations: ['Denver, CO'], searchLimit: 10 },
  'rental-hosts': { mode: 'city', city: ['Lisbon, Portugal'], maxPages: 1 },
  'store-leads': { platform: 'shopify', countryCode: 'US', totalLeads: 100, offset: 0 },
  'tech-stack': { technology: 'Klaviyo' },
  'email-validator': { emails: ['jane.doe@acme.com', 'sales@example.org'] },
  'email-finder': { contacts: [{ first_name: 'Jane', last_name: 'Doe', domain: 'acme.com' }, { full_name: 'John Smith', company_name: 'Globex' }] },
  'website-finder': { domains: ['acme.com', 'globex.com'], jobTitle: 'CEO' },
};
