import { z } from 'zod';
import { AppError } from '../shared/errors.ts';
import { COMPANY_FILTERS, isSet, PARAMETER_OF } from '../catalog/leads/filters.ts';
import { SENIORITY_WORDS } from '../catalog/leads/vocabulary.ts';
import type { LeadFilters } from '../sources/leads.ts';
import {
  NoUsableFiltersError,
  peopleSearchTranslation,
  translatePeopleSearchUrl,
  type SearchTranslation,
} from '../catalog/leads/people-search-url.ts';
import { formatDollars } from '../billing/money.ts';
import type { LeadRecord } from '../sources/leads.ts';
import { perResult } from '../billing/pricing.ts';
import { cell, defineTool, type Column, type Row } from './types.ts';

/** Leads read from the lead database per query (keyset on id); a run of 50,000 is 50 queries. */
const CHUNK = 1_000;
/** Rows stored and announced at once. */
const BATCH = 500;
export const MIN_COUNT = 500;
export const MAX_COUNT = 50_000;
export const DEFAULT_COUNT = 1_000;
/** The spec: a scrape may go this far past the wallet balance. */
export const OVERDRAFT_MICROS = 1_000_000n;

export const leadScraperInput = z.object({
  url: z
    .string({
      error: (issue) =>
        issue.input === undefined ? 'url is required: a people-search URL in the bracket format' : 'must be a string',
    })
    .trim()
    .min(1, 'url is required: a people-search URL in the bracket format')
    .max(16_000, 'must be at most 16000 characters')
    .refine((value) => URL.canParse(value), 'is not a URL')
    .describe(
      'People-search URL in the older bracket format, where array parameters end in [] (e.g. ' +
        'https://app.apollo.io/#/people?personTitles[]=ceo&personLocations[]=United%20States).',
    )
    .meta({
      title: 'People-search link',
      examples: ['https://app.apollo.io/#/people?personTitles[]=ceo&personLocations[]=United%20States'],
    }),
  count: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(MIN_COUNT, `must be at least ${MIN_COUNT}`)
    .max(MAX_COUNT, `must be at most ${MAX_COUNT} per run`)
    .default(DEFAULT_COUNT)
    .describe('Leads to scrape, 500 to 50,000; default 1,000. Read in chunks of 1,000.')
    .meta({ title: 'Number of leads', examples: [1000] }),
  fileName: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(50, 'must be at most 50 characters')
    .optional()
    .describe('Export name of the result file.')
    .meta({ title: 'File name', examples: ['us-ceos'] }),
});
export type LeadScraperInput = z.output<typeof leadScraperInput>;

/**
 * The URL as a lead database search, exactly as GET /api/v1/database/leads reads it: refuses the
 * newer format (400 unsupported_url_format) and URLs with nothing the database can use (400
 * no_usable_filters).
 */
export function planLeadSearch(url: string): { filters: LeadFilters; translation: SearchTranslation } {
  const planned = translatePeopleSearchUrl(url);
  const { translation } = planned;
  if (translation.applied.length + translation.broadened.length === 0) {
    throw new NoUsableFiltersError(translation);
  }
  return planned;
}

const column = (key: string, description: string, type?: Column['type']): Column => ({
  key,
  header: key,
  description,
  ...(type ? { type } : {}),
});

/** The lead record fields, in the lead database's order. */
export const LEAD_COLUMNS: Column[] = [
  column('id', 'Lead id in the lead database (stable; use it to deduplicate across runs)', cell.int),
  column('first_name', 'First name'),
  column('last_name', 'Last name'),
  column('full_name', 'First and last name'),
  column('title', 'Job title'),
  {
    ...column(
      'seniority',
      'Seniority: owner, founder, c_suite, partner, vp, head, director, manager, senior, entry or intern',
    ),
    values: SENIORITY_WORDS,
  },
  column('department', 'Department, e.g. sales, engineering'),
  column('email', 'Work email address'),
  column('email_status', 'verified, guessed or unavailable'),
  column('phone', 'Work phone'),
  column('mobile', 'Mobile phone'),
  column('linkedin_url', 'Social (professional network) profile URL'),
  column('city', 'City of the person'),
  column('state', 'State or region of the person'),
  column('country', 'Country of the person'),
  column('company_name', 'Company name'),
  column('company_domain', 'Company root domain'),
  column('company_website', 'Company website'),
  column('company_industry', 'Company industry'),
  column('company_size', 'Company employee band, e.g. 51-200'),
  column('employees_count', 'Company employee count', cell.int),
  column('company_annual_revenue', 'Company annual revenue, USD', cell.usd),
  column('company_city', 'Company headquarters city'),
  column('company_state', 'Company headquarters state or region'),
  column('company_country', 'Company headquarters country'),
  column('keywords', 'Company keywords', cell.texts),
  column('company_technologies', 'Technologies the company website runs', cell.texts),
  column('company_founded', 'Year the company was founded', cell.int),
  column('company_phone', 'Company phone'),
  column('company_linkedin_url', 'Company social (professional network) page'),
  column('company_twitter_url', 'Company microblog page'),
  column('company_facebook_url', 'Company social network page'),
];

/** A lead record as a result row: every column present, null where the lead has no data. */
const toRow = (lead: LeadRecord): Row => Object.fromEntries(LEAD_COLUMNS.map((c) => [c.key, lead[c.key] ?? null]));

const summary = (t: SearchTranslation) =>
  [`${t.applied.length} applied`, `${t.broadened.length} broadened`, `${t.unsupported.length} unsupported`].join(', ');

const price = perResult('lead', '0.0039');

export const leadScraperTool = defineTool({
  name: 'lead-scraper',
  title: 'Lead scraper (people-search URL)',
  description:
    'Leads from a saved people-search URL: the link’s filters run against the lead database ' +
    'and every matching person comes back with their contact details and company data.',
  rest: { path: '/api/v1/scrape/leadplatform' },
  graphql: { mutation: 'startLeadScrape', inputType: 'StartLeadScrapeInput' },
  mcp: { name: 'scrape_leads_from_url', toolset: 'directories', openWorld: true },
  example: {
    url:
      'https://app.apollo.io/#/people?personTitles[]=ceo&personLocations[]=United%20States' +
      '&organizationNumEmployeesRanges[]=11,50',
    count: 1000,
    fileName: 'us-ceos',
  },
  input: leadScraperInput,
  price,
  overdraftMicros: OVERDRAFT_MICROS,
  cancellable: false,
  notes: [
    'The url must use the older bracket format (personTitles[]=ceo); ' +
      'a link whose array parameters lack the brackets is refused with ' +
      '400 unsupported_url_format, explaining how to get the older format.',
    'The url is translated into lead database filters exactly as the lead database API translates its url ' +
      'parameter; the start response reports the result in search_translation (applied, ' +
      'broadened, unsupported, ignored).',
    'uniqueUrlId is stripped from the url; ' +
      'page, sorting and view parameters are ignored, since the scrape reads every match in id order.',
    'A url with no filter the lead database can use is refused with 400 no_usable_filters, ' +
      'rather than scraping arbitrary leads.',
    'count (500 to 50,000, default 1,000) is read in chunks of 1,000 leads with a keyset on the lead id, ' +
      'so a replayed attempt returns the same leads in the same order.',
    `The run holds count × ${price.each}, capped at the wallet balance plus ` +
      `${formatDollars(OVERDRAFT_MICROS)} USD; when the cap is reached first the run stops there, ` +
      'keeps and bills the leads it has, and its statusMessage says the held amount is used up.',
    'A search with company filters (keywords, revenue, company location, technologies) ' +
      'while company data is being prepared fails at once with filters_not_applied_yet, and nothing is billed.',
    'Fewer matching leads than count is not an error: the run ends with all the matches and bills only those.',
    'Rows carry the lead database’s record fields; a field without data is empty.',
    'Runs cannot be cancelled.',
  ],
  columns: LEAD_COLUMNS,
  identity: ['id'],
  requested: (input) => input.count,
  startDetails: z.object({ search_translation: peopleSearchTranslation }),
  describeStart(input) {
    const { translation } = planLeadSearch(input.url);
    return {
      message:
        `Scraping up to ${input.count} leads matching the URL’s filters (${summary(translation)}; ` +
        'see search_translation). ' +
        `The scrape is capped at your wallet balance plus ${formatDollars(OVERDRAFT_MICROS)} USD.`,
      extra: { search_translation: translation },
    };
  },
  async *run(ctx) {
    const { filters } = planLeadSearch(ctx.input.url);
    const companyFilters = COMPANY_FILTERS.filter((k) => isSet(filters[k]));
    if (companyFilters.length > 0 && !(await ctx.sources.leads.companyDataReady())) {
      const names = companyFilters.map((k) => PARAMETER_OF[k]);
      throw new AppError(
        409,
        'filters_not_applied_yet',
        'Company data is still being prepared, so these filters cannot be applied yet: ' +
          `${names.join(', ')}. Nothing was billed; start the scrape again later.`,
      );
    }
    const count = ctx.input.count;
    let taken = 0;
    let afterId: number | undefined;
    while (taken < count && !ctx.signal.aborted) {
      const limit = Math.min(CHUNK, count - taken);
      const chunk = await ctx.sources.leads.searchLeads({ filters, limit, afterId });
      const last = chunk.at(-1);
      if (!last) break;
      afterId = last.id;
      // A short chunk is the search's end, as is the count reached: its last slice is the run's last batch.
      const ends = chunk.length < limit || taken + chunk.length >= count;
      for (let i = 0; i < chunk.length && !ctx.signal.aborted; i += BATCH) {
        const rows = chunk.slice(i, i + BATCH).map(toRow);
        taken += rows.length;
        yield { rows, message: `${taken} of up to ${count} leads scraped`, last: ends && i + BATCH >= chunk.length };
      }
      if (chunk.length < limit) break;
    }
  },
});
