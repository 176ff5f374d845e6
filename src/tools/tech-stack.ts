import { z } from 'zod';
import { rootDomain } from '../catalog/stores/domains.ts';
import { isoWeekPeriod, monthPeriod, similarNames, technologyKey } from '../catalog/stores/technologies.ts';
import type { StoreSource, TechnologyDataset, TechnologyUser } from '../sources/stores.ts';
import { flat } from '../billing/pricing.ts';
import { cell, defineTool } from './types.ts';

const BATCH_SIZE = 500;
const LOOKUP_PAGE = 5_000;
const CACHE_TOOL = 'tech-stack';

export const techStackInput = z.object({
  technology: z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? 'required: a technology name, e.g. "Klaviyo"'
          : 'must be a technology name as a string, e.g. "Klaviyo"',
    })
    .trim()
    .min(1, 'must not be empty: a technology name, e.g. "Klaviyo"')
    .max(200, 'must be at most 200 characters')
    .refine((value) => technologyKey(value).length > 0, 'must contain letters or digits')
    .describe(
      'Technology or store app name, matched ignoring case and spacing: ' +
        '"Google Analytics", "googleanalytics" and "google-analytics" are the same.',
    )
    .meta({ title: 'Technology', examples: ['Klaviyo'] }),
  fileName: z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, 'must not be empty')
    .max(50, 'must be at most 50 characters')
    .optional()
    .describe('Export name.')
    .meta({ title: 'File name', examples: ['klaviyo-stores'] }),
});
export type TechStackInput = z.output<typeof techStackInput>;

/** The stored names a requested technology matches, per dataset. */
interface Match {
  storeTechnologies: string[];
  storeApps: string[];
  companyTechnologies: string[];
}

/** One result row: a root domain and what is known of the website there. */
type DomainRow = {
  domain: string;
  name: string;
  platform: string | null;
  category: string | null;
  country: string | null;
  state: string | null;
  city: string | null;
  matched: string[];
  found_in: TechnologyDataset[];
};

/** The row fields in column order: the cache keeps rows as tuples (jsonb would reorder object keys). */
const FIELDS = ['domain', 'name', 'platform', 'category', 'country', 'state', 'city', 'matched', 'found_in'] as const;
type DomainTuple = [
  domain: string,
  name: string,
  platform: string | null,
  category: string | null,
  country: string | null,
  state: string | null,
  city: string | null,
  matched: string[],
  found_in: TechnologyDataset[],
];

/** What a lookup stores in the cache for its data period. */
interface Lookup {
  matched: string[];
  rows: DomainTuple[];
}

const rowOf = (tuple: DomainTuple): DomainRow =>
  Object.fromEntries(FIELDS.map((field, i) => [field, tuple[i]])) as DomainRow;

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
const countryNames = new Map<string, string>();
/** "GB" → "United Kingdom"; a code Intl does not know stays as it is. */
function countryName(code: string | null): string | null {
  if (!code) return null;
  let name = countryNames.get(code);
  if (name === undefined) {
    try {
      name = regionNames.of(code.toUpperCase()) ?? code;
    } catch {
      name = code;
    }
    countryNames.set(code, name);
  }
  return name;
}

async function matchNames(stores: StoreSource, key: string): Promise<Match & { known: string[] }> {
  const [storeTechnologies, storeApps, companyTechnologies] = await Promise.all([
    stores.names('storeTechnologies'),
    stores.names('storeApps'),
    stores.names('companyTechnologies'),
  ]);
  const matching = (names: string[]) => names.filter((n) => technologyKey(n) === key).sort();
  return {
    storeTechnologies: matching(storeTechnologies),
    storeApps: matching(storeApps),
    companyTechnologies: matching(companyTechnologies),
    known: [...new Set([...storeTechnologies, ...storeApps, ...companyTechnologies])],
  };
}

/** Every domain running the technology, one row per root domain, ordered by domain. */
async function lookUp(stores: StoreSource, match: Match, signal: AbortSignal): Promise<Lookup> {
  const matched = new Set([...match.storeTechnologies, ...match.storeApps, ...match.companyTechnologies]);
  const byDomain = new Map<string, DomainRow>();
  const add = (user: TechnologyUser, dataset: TechnologyDataset) => {
    const domain = rootDomain(user.domain) ?? user.domain.trim().toLowerCase();
    const names = user.matched;
    const found = byDomain.get(domain);
    if (!found) {
      byDomain.set(domain, {
        domain,
        name: user.name,
        platform: user.platform,
        category: user.category,
        country: user.country ?? countryName(user.countryCode),
        state: user.state,
        city: user.city,
        matched: names,
        found_in: [dataset],
      });
      return;
    }
    for (const name of names) if (!found.matched.includes(name)) found.matched.push(name);
    if (!found.found_in.includes(dataset)) found.found_in.push(dataset);
    for (const field of ['platform', 'category', 'country', 'state', 'city'] as const) {
      const value = field === 'country' ? (user.country ?? countryName(user.countryCode)) : user[field];
      if (found[field] === null && value !== null) found[field] = value;
    }
  };
  const searches: [TechnologyDataset, string[], string[]][] = [
    ['stores', match.storeTechnologies, match.storeApps],
    ['companies', match.companyTechnologies, []],
  ];
  for (const [dataset, technologies, apps] of searches) {
    if (technologies.length === 0 && apps.length === 0) continue;
    let afterId: number | undefined;
    for (;;) {
      // A lookup stopped half-way must not be cached as the period's answer.
      if (signal.aborted) throw new Error('The lookup was stopped before it finished');
      const page = await stores.technologyUsers({ dataset, technologies, apps, limit: LOOKUP_PAGE, afterId });
      for (const user of page) add(user, dataset);
      const last = page.at(-1);
      if (!last || page.length < LOOKUP_PAGE) break;
      afterId = last.id;
    }
  }
  const rows = [...byDomain.values()].sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
  return {
    matched: [...matched].sort(),
    rows: rows.map((row) => FIELDS.map((field) => row[field]) as unknown as DomainTuple),
  };
}

const domains = (n: number) => `${n} domain${n === 1 ? '' : 's'}`;

const price = flat('technology', '4.99', (each) => `${each} per technology (flat, independent of result count)`);

export const techStackTool = defineTool({
  name: 'tech-stack',
  title: 'Tech stack scraper',
  description:
    'Every website running a technology or store app: deduplicated root domains from the store catalog ' +
    '(technologies and installed apps) and the lead database companies, with name, platform, category and location.',
  rest: { path: '/api/v1/scrape/techstack' },
  graphql: { mutation: 'startTechStack', inputType: 'StartTechStackInput' },
  mcp: { name: 'scrape_tech_stack', toolset: 'directories' },
  example: { technology: 'Klaviyo' },
  input: techStackInput,
  rowUnit: 'domain',
  price,
  cancellable: false,
  notes: [
    'technology is matched ignoring case, spacing and punctuation ("Google Analytics", ' +
      '"googleanalytics" and "google-analytics" are one name), against whole names only.',
    "Domains come from the stores' technologies, " +
      "the stores' installed apps (shopify) and the technologies of the lead database's companies.",
    'Each domain is reduced to its registrable root ("www.shop.example.co.uk" → "example.co.uk") ' +
      'and listed once, in alphabetical order, with found_in naming the datasets it came from.',
    'A lookup is computed once per data period and shared by every account: technologies refresh monthly ' +
      '(calendar month, UTC) and store apps weekly (ISO week, UTC); ' +
      'a name that is a store app follows the weekly period.',
    'Repeated requests in the same period are answered from that cache at once; ' +
      "the run's progress message says whether it was looked up or answered from the cache, and for which period.",
    `The price is flat: ${price.each} per run, whatever the number of domains, ` +
      'also when no website runs the technology (the progress message then suggests similar names).',
  ],
  identity: ['domain'],
  columns: [
    { key: 'domain', header: 'domain', description: 'Registrable root domain' },
    { key: 'name', header: 'name', description: 'Store or company name' },
    { key: 'platform', header: 'platform', description: 'Store platform; empty for companies' },
    { key: 'category', header: 'category', description: 'Store category or company industry' },
    { key: 'country', header: 'country', description: 'Country' },
    { key: 'state', header: 'state', description: 'State or region' },
    { key: 'city', header: 'city', description: 'City' },
    {
      key: 'matched',
      header: 'matched',
      description: 'The technology or app names found on the domain, as recorded',
      type: cell.texts,
    },
    {
      key: 'found_in',
      header: 'found_in',
      description: 'Datasets the domain was found in: stores, companies',
      type: cell.texts,
    },
  ],
  requested: () => 1,
  describeStart(input) {
    return { message: `Looking up the websites running "${input.technology}"` };
  },
  async *run(ctx) {
    const stores = ctx.sources.stores;
    const key = technologyKey(ctx.input.technology);
    const match = await matchNames(stores, key);
    const weekly = match.storeApps.length > 0;
    const period = weekly ? isoWeekPeriod(ctx.startedAt) : monthPeriod(ctx.startedAt);
    const { value, hit } = await ctx.store.cached<Lookup>(CACHE_TOOL, key, period, () =>
      lookUp(stores, match, ctx.signal),
    );
    const spelled = value.matched.length > 0 && !value.matched.includes(ctx.input.technology);
    const named = `"${ctx.input.technology}"${spelled ? ` (${value.matched.join(', ')})` : ''}`;
    const source = hit
      ? `answered from the cache of the ${period} data (${weekly ? 'weekly' : 'monthly'} refresh)`
      : `looked up in the ${period} data`;
    if (value.rows.length === 0) {
      const similar = similarNames(ctx.input.technology, match.known);
      const hint = similar.length > 0 ? `; similar names: ${similar.join(', ')}` : '';
      yield {
        rows: [],
        handled: 1,
        message: `No website runs ${named}: ${source}${hint}`,
        note: `No website runs ${named}${hint}; ${source}`,
      };
      return;
    }
    for (let i = 0; i < value.rows.length; i += BATCH_SIZE) {
      const end = Math.min(i + BATCH_SIZE, value.rows.length);
      const last = end === value.rows.length;
      yield {
        rows: value.rows.slice(i, end).map(rowOf),
        handled: last ? 1 : 0,
        message: `${domains(end)} of ${value.rows.length} running ${named}: ${source}`,
        note: `${source.charAt(0).toUpperCase()}${source.slice(1)}`,
      };
    }
  },
});
