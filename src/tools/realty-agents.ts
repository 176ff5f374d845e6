import { z } from 'zod';
import { describeAgentLocation, parseAgentLocation } from './lib/agents/location.ts';
import {
  AGENT_LANGUAGES,
  languageName,
  SPECIALTY_NAMES,
  specialtyCode,
  unknownLanguageMessage,
  unknownSpecialtyMessage,
} from './lib/agents/vocabulary.ts';
import type { AgentLocation, AgentProfile } from '../sources/agents.ts';
import { perResult } from '../billing/pricing.ts';
import { cell, defineTool, type Row } from './types.ts';

const PAGE_SIZE = 200;

const text = (field: string, example: string) =>
  z
    .string({
      error: (issue) =>
        issue.input === undefined ? `required: ${field}, e.g. ${example}` : `must be a string, e.g. ${example}`,
    })
    .trim();

export const realtyAgentsInput = z.object({
  location: text('a city and state or a ZIP code', '"Denver, CO" or "80202"')
    .superRefine((value, ctx) => {
      const parsed = parseAgentLocation(value);
      if ('error' in parsed) ctx.addIssue({ code: 'custom', message: parsed.error });
    })
    .describe('City and state ("Denver, CO", "Denver, Colorado") or a 5-digit ZIP code ("80202").')
    .meta({ title: 'Location', examples: ['Denver, CO'] }),
  specialty: text('a specialty code', '"1001"')
    .transform((value, ctx) => {
      const code = specialtyCode(value);
      if (code) return code;
      ctx.addIssue({ code: 'custom', message: unknownSpecialtyMessage(value) });
      return z.NEVER;
    })
    .optional()
    .describe(
      'Specialty code: "1001" buyer\'s agent, "1002" listing agent, … (the full list is below); ' +
        'a specialty name such as "Luxury homes" is accepted too.',
    )
    .meta({ title: 'Specialty', examples: ['1001'] }),
  language: text('a language', '"Spanish"')
    .transform((value, ctx) => {
      const name = languageName(value);
      if (name) return name;
      ctx.addIssue({ code: 'custom', message: unknownLanguageMessage(value) });
      return z.NEVER;
    })
    .optional()
    .describe('Preferred language the agent speaks, any case, e.g. "spanish" (the full list is below).')
    .meta({ title: 'Language', examples: ['spanish'] }),
  searchLimit: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be between 1 and 500')
    .max(500, 'must be between 1 and 500')
    .default(10)
    .describe('Agents to return, 1 to 500; default 10.')
    .meta({ title: 'Number of agents', examples: [10] }),
});
export type RealtyAgentsInput = z.output<typeof realtyAgentsInput>;

/** The validated location; the schema has refused anything else. */
function locationOf(input: RealtyAgentsInput): AgentLocation {
  const parsed = parseAgentLocation(input.location);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

function toRow(agent: AgentProfile): Row {
  return {
    name: agent.name,
    brokerage: agent.brokerage,
    license_number: agent.licenseNumber,
    phone: agent.phone,
    email: agent.email,
    city: agent.city,
    state: agent.state,
    zip: agent.zip,
    specialties: agent.specialties.map((code) => SPECIALTY_NAMES.get(code) ?? code),
    specialty_codes: agent.specialties,
    languages: agent.languages,
    years_experience: agent.yearsExperience,
    rating: agent.rating,
    review_count: agent.reviewCount,
    sales_last_12_months: agent.salesLast12Months,
    price_range_min: agent.priceRangeMin,
    price_range_max: agent.priceRangeMax,
    profile_url: agent.profileUrl,
  };
}

function searchLabel(input: RealtyAgentsInput): string {
  const specialty = input.specialty ? SPECIALTY_NAMES.get(input.specialty) : undefined;
  const filters = [
    specialty ? `${specialty.toLowerCase()} (${input.specialty})` : undefined,
    input.language ? `speaking ${input.language}` : undefined,
  ].filter(Boolean);
  return `agents in ${describeAgentLocation(locationOf(input))}${filters.length ? `, ${filters.join(', ')}` : ''}`;
}

export const realtyAgentsTool = defineTool({
  name: 'realty-agents',
  title: 'Real estate agents scraper',
  description:
    'Real estate agents working in a city or ZIP code, optionally by specialty and language: brokerage, ' +
    'licence number, phone, email, specialties, languages, experience, rating, recent sales and price range.',
  rest: { path: '/api/v1/scrape/realty-agents' },
  graphql: { mutation: 'startRealtyAgentsScrape', inputType: 'StartRealtyAgentsScrapeInput' },
  mcp: { name: 'scrape_realty_agents', toolset: 'directories', openWorld: true },
  example: { location: 'Denver, CO', specialty: '1001', searchLimit: 10 },
  input: realtyAgentsInput,
  price: perResult('agent', '0.029'),
  cancellable: true,
  notes: [
    'A location is a city with its state ("Denver, CO", "Denver, Colorado", "Denver CO") or a ZIP code; ' +
      'a city without a state or a state alone is refused with 400 validation_failed on `location`.',
    'When the location carries a ZIP code ("Denver, CO 80202" or "80202"), ' +
      'agents whose office is in that ZIP code are returned; otherwise agents of the city.',
    'An unknown specialty or language is refused with 400 ' +
      'validation_failed naming the field, suggesting the closest names.',
    'Agents come in catalog order (oldest entry first), ' +
      'so the same request returns the same agents until the catalog changes.',
    `Specialty codes: ${[...SPECIALTY_NAMES].map(([code, name]) => `${code} ${name}`).join(', ')}.`,
    `Languages: ${AGENT_LANGUAGES.join(', ')}.`,
  ],
  identity: ['profile_url'],
  columns: [
    { key: 'name', header: 'name', description: 'Agent name' },
    { key: 'brokerage', header: 'brokerage', description: 'Brokerage the agent works for' },
    { key: 'license_number', header: 'license_number', description: 'Real estate licence number' },
    { key: 'phone', header: 'phone', description: 'Phone number' },
    { key: 'email', header: 'email', description: 'Email address' },
    { key: 'city', header: 'city', description: 'City of the office' },
    { key: 'state', header: 'state', description: 'State abbreviation' },
    { key: 'zip', header: 'zip', description: 'ZIP code of the office' },
    {
      key: 'specialties',
      header: 'specialties',
      description: "Specialties by name (Buyer's agent, Listing agent, …)",
      type: cell.texts,
    },
    {
      key: 'specialty_codes',
      header: 'specialty_codes',
      description: 'Specialty codes (1001, 1002, …)',
      type: cell.texts,
    },
    { key: 'languages', header: 'languages', description: 'Languages spoken', type: cell.texts },
    { key: 'years_experience', header: 'years_experience', description: 'Years of experience', type: cell.int },
    { key: 'rating', header: 'rating', description: 'Average client rating, 1–5', type: cell.number },
    { key: 'review_count', header: 'review_count', description: 'Number of client reviews', type: cell.int },
    {
      key: 'sales_last_12_months',
      header: 'sales_last_12_months',
      description: 'Sales closed in the last 12 months',
      type: cell.int,
    },
    {
      key: 'price_range_min',
      header: 'price_range_min',
      description: 'Lowest price of homes sold, USD',
      type: cell.usd,
    },
    {
      key: 'price_range_max',
      header: 'price_range_max',
      description: 'Highest price of homes sold, USD',
      type: cell.usd,
    },
    { key: 'profile_url', header: 'profile_url', description: 'Directory profile link' },
  ],
  requested: (input) => input.searchLimit,
  describeStart(input) {
    return {
      message: `Searching ${searchLabel(input)}, up to ${input.searchLimit} agent${input.searchLimit === 1 ? '' : 's'}`,
    };
  },
  async *run(ctx) {
    const { specialty, language, searchLimit } = ctx.input;
    const location = locationOf(ctx.input);
    let taken = 0;
    let afterId: number | undefined;
    while (taken < searchLimit && !ctx.signal.aborted) {
      const page = await ctx.sources.agents.searchAgents({
        location,
        specialty,
        language,
        limit: Math.min(PAGE_SIZE, searchLimit - taken),
        afterId,
      });
      const last = page.at(-1);
      if (!last) break;
      afterId = last.id;
      taken += page.length;
      yield {
        rows: page.map(toRow),
        message: `${taken} agent${taken === 1 ? '' : 's'} found in ${describeAgentLocation(location)}`,
        last: taken >= searchLimit,
      };
    }
  },
});
