import { z } from 'zod';
import { STORE_PLATFORMS, STORE_SOCIALS } from '../../db/tables/stores.ts';
import {
  isStorePlatform,
  resolveStoreNames,
  storeBoundFields,
  storeFilter,
  storeKey,
} from '../catalog/stores/filters.ts';
import { storeNameLists } from '../catalog/stores/names.ts';
import type { StoreFilter, StoreLead, StoreSocial } from '../sources/stores.ts';
import { perResult } from '../billing/pricing.ts';
import { cell, defineTool, type Row } from './types.ts';

const PAGE_SIZE = 500;
export const DEFAULT_TOTAL_LEADS = 100;
export const MAX_TOTAL_LEADS = 50_000;
const MAX_OFFSET = 10_000_000;

/** The seven social networks, by the lower-case name each boolean carries. */
const SOCIAL_NETWORKS: Record<StoreSocial, string> = {
  instagram: 'photo-sharing',
  facebook: 'social network',
  tiktok: 'short video',
  youtube: 'video',
  linkedin: 'professional network',
  twitter: 'microblog',
  pinterest: 'pinboard',
};

/** Each network's name as people write it. */
const SOCIAL_NAMES: Record<StoreSocial, string> = {
  instagram: 'Instagram',
  facebook: 'Facebook',
  tiktok: 'TikTok',
  youtube: 'YouTube',
  linkedin: 'LinkedIn',
  twitter: 'Twitter',
  pinterest: 'Pinterest',
};

const text = (max: number, example: string) =>
  z
    .string({ error: `must be a string, e.g. "${example}"` })
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`);

const count = (max: number) =>
  z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(0, 'must be 0 or more')
    .max(max, `must be at most ${max}`);

const bound = (max: number, whole: boolean) =>
  (whole
    ? z.number({ error: 'must be a number' }).int('must be a whole number')
    : z.number({ error: 'must be a number' })
  )
    .min(0, 'must be 0 or more')
    .max(max, `must be at most ${max}`)
    .optional();

const flag = (description: string, dflt: boolean) =>
  z.boolean({ error: 'must be true or false' }).default(dflt).describe(description);

const platformList = (value: string) =>
  value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);

export const storeLeadsInput = z
  .object({
    platform: text(500, 'shopify')
      .superRefine((value, ctx) => {
        const unknown = platformList(value).filter((p) => !isStorePlatform(p));
        if (unknown.length > 0) {
          const named = unknown.map((p) => `"${p}"`).join(', ');
          ctx.addIssue({ code: 'custom', message: `unknown platform ${named}; one of ${STORE_PLATFORMS.join(', ')}` });
        }
      })
      .optional()
      .describe(
        `Store platform, case-insensitive: ${STORE_PLATFORMS.join(', ')}; ` +
          'several may be comma-separated. Default: all platforms.',
      )
      .meta({ title: 'Store platform', examples: ['shopify'] }),
    totalLeads: z
      .number({ error: 'must be a number' })
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(MAX_TOTAL_LEADS, `must be at most ${MAX_TOTAL_LEADS} per run; page with offset for more`)
      .default(DEFAULT_TOTAL_LEADS)
      .describe(`Leads to fetch; default ${DEFAULT_TOTAL_LEADS}, at most ${MAX_TOTAL_LEADS} per run.`)
      .meta({ title: 'Number of leads', examples: [100] }),
    resumeFromLead: count(MAX_TOTAL_LEADS - 1)
      .optional()
      .describe(
        'Continue a cancelled job: the number of leads it already delivered. ' +
          'Send the same filters, offset and totalLeads; the run delivers the rest of the job.',
      )
      .meta({ title: 'Resume after lead', examples: [0] }),
    countryCode: z
      .string({ error: 'must be a two-letter country code, e.g. "US"' })
      .trim()
      .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code, e.g. "US"')
      .optional()
      .describe('Two-letter ISO country code, e.g. "US" (case-insensitive).')
      .meta({ title: 'Country', examples: ['US'] }),
    emails: flag(
      'Only stores with at least one email address; default true. false applies no email condition.',
      true,
    ).meta({ title: 'Only stores with an email', examples: [true] }),
    phones: flag('Only stores with a phone number; default false.', false).meta({
      title: 'Only stores with a phone',
      examples: [false],
    }),
    category: text(200, 'Apparel')
      .optional()
      .describe('Store category, case-insensitive, e.g. "Home & Garden".')
      .meta({ title: 'Category', examples: ['Home & Garden'] }),
    city: text(200, 'Austin')
      .optional()
      .describe('City, case-insensitive.')
      .meta({ title: 'City', examples: ['Austin'] }),
    state: text(200, 'Texas')
      .optional()
      .describe('State or region, case-insensitive; a US state by name or abbreviation ("Texas" or "TX").')
      .meta({ title: 'State or region', examples: ['TX'] }),
    technologies: text(1000, 'Klaviyo')
      .optional()
      .describe(
        'Technologies used, matched ignoring case and spacing ("google analytics"); ' +
          'several comma-separated match stores using any of them.',
      )
      .meta({ title: 'Technologies', examples: ['google analytics, klaviyo'] }),
    apps: text(1000, 'Judge.me Product Reviews')
      .optional()
      .describe(
        'Installed apps (hosted platform, shopify, only), matched ignoring case and spacing; ' +
          'several comma-separated match any of them.',
      )
      .meta({ title: 'Installed apps', examples: ['klaviyo'] }),
    ...(Object.fromEntries(
      STORE_SOCIALS.map((s) => [
        s,
        flag(`true: only stores with a profile on ${s} (${SOCIAL_NETWORKS[s]}); default false.`, false).meta({
          title: `Only stores on ${SOCIAL_NAMES[s]}`,
          examples: [true],
        }),
      ]),
    ) as Record<StoreSocial, z.ZodDefault<z.ZodBoolean>>),
    planExclude: z
      .array(text(100, 'plus'), { error: 'must be a list of plan tiers, e.g. ["basic", "plus"]' })
      .max(50, 'at most 50 plan tiers')
      .optional()
      .describe('Plan tiers to leave out, case-insensitive, e.g. ["basic", "plus"].')
      .meta({ title: 'Plans to leave out', examples: [['basic']] }),
    offset: count(MAX_OFFSET)
      .optional()
      .describe(
        'Matching stores to skip. Start at 0 and add totalLeads per call (the response returns nextOffset). ' +
          'Without it, identical calls return the same first page.',
      )
      .meta({ title: 'Stores to skip', examples: [0] }),
    ...storeBoundFields(bound),
    fileName: text(50, 'shopify-us')
      .optional()
      .describe('Export name.')
      .meta({ title: 'File name', examples: ['shopify-us'] }),
  })
  .superRefine((input, ctx) => {
    if (input.resumeFromLead !== undefined && input.resumeFromLead >= input.totalLeads) {
      ctx.addIssue({
        code: 'custom',
        path: ['resumeFromLead'],
        message:
          `must be less than totalLeads (${input.totalLeads}): ` +
          'it is the number of leads the cancelled job already delivered',
      });
    }
    if (input.apps && input.platform && !platformList(input.platform).some((p) => storeKey(p) === 'shopify')) {
      ctx.addIssue({
        code: 'custom',
        path: ['apps'],
        message:
          'apps are known only for shopify stores (the hosted platform); add shopify to platform or leave apps out',
      });
    }
  });
export type StoreLeadsInput = z.output<typeof storeLeadsInput>;

/** The store filter of an input (400 `validation_failed` for contradictory bounds or aliases). */
export function storeLeadsFilter(input: StoreLeadsInput): StoreFilter {
  return storeFilter({
    ...input,
    platform: input.platform === undefined ? undefined : platformList(input.platform),
    countryCode: input.countryCode === undefined ? undefined : [input.countryCode],
    category: input.category === undefined ? undefined : [input.category],
    city: input.city === undefined ? undefined : [input.city],
    state: input.state === undefined ? undefined : [input.state],
    technologies: input.technologies === undefined ? undefined : [input.technologies],
    apps: input.apps === undefined ? undefined : [input.apps],
  });
}

/** The leads of this run: the job's leads from `resumeFromLead` on. */
const leadsWanted = (input: StoreLeadsInput) => input.totalLeads - (input.resumeFromLead ?? 0);
/** Matching stores before this run's first lead. */
const leadsSkipped = (input: StoreLeadsInput) => (input.offset ?? 0) + (input.resumeFromLead ?? 0);

function toRow(s: StoreLead): Row {
  return {
    domain: s.domain,
    name: s.name,
    platform: s.platform,
    plan_tier: s.planTier,
    category: s.category,
    country_code: s.countryCode,
    state: s.state,
    city: s.city,
    emails: s.emails,
    phones: s.phones,
    instagram_url: s.instagramUrl,
    facebook_url: s.facebookUrl,
    tiktok_url: s.tiktokUrl,
    youtube_url: s.youtubeUrl,
    linkedin_url: s.linkedinUrl,
    twitter_url: s.twitterUrl,
    pinterest_url: s.pinterestUrl,
    technologies: s.technologies,
    apps: s.apps,
    estimated_monthly_visits: s.estimatedMonthlyVisits,
    estimated_monthly_sales: s.estimatedMonthlySales,
    employee_count: s.employeeCount,
  };
}

const quoted = (names: string[]) => names.map((n) => `"${n}"`).join(', ');

const price = perResult('lead', '0.0039');

export const storeLeadsTool = defineTool({
  name: 'store-leads',
  title: 'Store leads',
  description:
    'E-commerce store leads by platform, location, category, technologies, installed apps, social profiles, ' +
    'plan tier, traffic, sales and staff size: domain, contacts, social profiles and estimates, page by page.',
  rest: { path: '/api/v1/scrape/store-leads' },
  graphql: { mutation: 'startStoreLeads', inputType: 'StartStoreLeadsInput' },
  mcp: { name: 'scrape_store_leads', toolset: 'directories' },
  example: { platform: 'shopify', countryCode: 'US', totalLeads: 100, offset: 0 },
  input: storeLeadsInput,
  price,
  cancellable: true,
  notes: [
    'Leads come in a fixed order (catalog id), so identical calls return the same leads; ' +
      'without offset a call always returns the first page.',
    `totalLeads defaults to ${DEFAULT_TOTAL_LEADS} and is at most ${MAX_TOTAL_LEADS} per run; ` +
      'a run with fewer matching stores delivers and bills what there is.',
    'offset skips that many matching stores; when offset is sent (0 included) the start response carries ' +
      'nextOffset = offset + totalLeads, the offset of the next page, and without offset nextOffset is left out.',
    'resumeFromLead continues a cancelled job: send the same filters, ' +
      'offset and totalLeads with resumeFromLead = the leads the cancelled run kept (its handled count); ' +
      "the run delivers the job's remaining leads, in the same order, and holds and bills only those.",
    'Filters run server-side: stores outside them (visits, sales, ' +
      'employee bounds included) are neither returned nor billed.',
    'emails defaults to true (only stores with an email address); ' +
      'emails: false applies no email condition, and so does false for phones and each social network.',
    `platform is one of the ten platforms (${STORE_PLATFORMS.join(', ')}), case-insensitive with spaces ` +
      'or hyphens for underscores; several may be comma-separated; any other value is refused with 400.',
    'technologies and apps are matched ignoring case, spacing and punctuation; ' +
      'comma-separated names match stores using any of them; ' +
      "names no store uses match nothing and are named in the run's progress message.",
    'apps are recorded only for shopify stores (the hosted platform): ' +
      'apps together with a platform list without shopify is refused with 400.',
    'planExclude leaves out stores on those plan tiers (case-insensitive); stores without a known tier are kept.',
    'state matches case-insensitively, and a US state by name also matches its abbreviation ("Texas" finds "TX").',
    'Each bound may be sent under its long name or its alias (visitsMin, salesMax, ...); ' +
      'both together must agree, and a minimum above its maximum is refused with 400.',
    `Billing: ${price.each} per lead delivered; the run holds the cost of the leads it may deliver.`,
  ],
  identity: ['domain'],
  columns: [
    { key: 'domain', header: 'domain', description: 'Store domain' },
    { key: 'name', header: 'name', description: 'Store name' },
    { key: 'platform', header: 'platform', description: 'Store platform, e.g. shopify' },
    { key: 'plan_tier', header: 'plan_tier', description: 'Plan tier on the platform' },
    { key: 'category', header: 'category', description: 'Store category' },
    { key: 'country_code', header: 'country_code', description: 'ISO country code' },
    { key: 'state', header: 'state', description: 'State or region' },
    { key: 'city', header: 'city', description: 'City' },
    { key: 'emails', header: 'emails', description: 'Email addresses', type: cell.texts },
    { key: 'phones', header: 'phones', description: 'Phone numbers', type: cell.texts },
    { key: 'instagram_url', header: 'instagram_url', description: 'Instagram (photo-sharing) profile' },
    { key: 'facebook_url', header: 'facebook_url', description: 'Facebook (social network) page' },
    { key: 'tiktok_url', header: 'tiktok_url', description: 'TikTok (short video) profile' },
    { key: 'youtube_url', header: 'youtube_url', description: 'YouTube (video) channel' },
    { key: 'linkedin_url', header: 'linkedin_url', description: 'LinkedIn (professional network) page' },
    { key: 'twitter_url', header: 'twitter_url', description: 'Twitter (microblog) profile' },
    { key: 'pinterest_url', header: 'pinterest_url', description: 'Pinterest (pinboard) profile' },
    { key: 'technologies', header: 'technologies', description: 'Technologies the store uses', type: cell.texts },
    { key: 'apps', header: 'apps', description: 'Installed apps (shopify stores)', type: cell.texts },
    {
      key: 'estimated_monthly_visits',
      header: 'estimated_monthly_visits',
      description: 'Estimated visits per month',
      type: cell.int,
    },
    {
      key: 'estimated_monthly_sales',
      header: 'estimated_monthly_sales',
      description: 'Estimated sales per month, USD',
      type: cell.usd,
    },
    { key: 'employee_count', header: 'employee_count', description: 'Estimated employees', type: cell.int },
  ],
  requested: leadsWanted,
  startDetails: z.object({
    totalLeads: z.int().describe('Leads this job delivers in all.'),
    resumeFromLead: z
      .int()
      .optional()
      .describe('Leads the cancelled job delivered already (as sent); absent unless resuming.'),
    nextOffset: z
      .int()
      .optional()
      .describe('The offset of the next page of stores (offset plus totalLeads); absent without an offset.'),
  }),
  describeStart(input) {
    storeLeadsFilter(input);
    const wanted = leadsWanted(input);
    const skipped = leadsSkipped(input);
    return {
      message:
        `Fetching up to ${wanted} store ` +
        `lead${wanted === 1 ? '' : 's'}${skipped > 0 ? `, after the first ${skipped} matching stores` : ''}`,
      extra: {
        totalLeads: input.totalLeads,
        ...(input.resumeFromLead === undefined ? {} : { resumeFromLead: input.resumeFromLead }),
        ...(input.offset === undefined ? {} : { nextOffset: input.offset + input.totalLeads }),
      },
    };
  },
  async *run(ctx) {
    const stores = ctx.sources.stores;
    const { filter, unknown } = await resolveStoreNames(storeLeadsFilter(ctx.input), storeNameLists(stores));
    const unknownNote = unknown.length > 0 ? `; no store uses ${quoted(unknown)}` : '';
    const wanted = leadsWanted(ctx.input);
    const skipped = leadsSkipped(ctx.input);
    let afterId: number | undefined;
    if (skipped > 0) {
      const at = await stores.storeIdAt(filter, skipped);
      if (at === null) {
        yield {
          rows: [],
          message: `Fewer than ${skipped + 1} stores match: none left after skipping ${skipped}${unknownNote}`,
          last: true,
        };
        return;
      }
      afterId = at;
    }
    let delivered = 0;
    while (delivered < wanted && !ctx.signal.aborted) {
      const limit = Math.min(PAGE_SIZE, wanted - delivered);
      const page = await stores.searchStores({ filter, limit, afterId });
      delivered += page.length;
      // A short page is the search's end, as is the count reached.
      yield {
        rows: page.map(toRow),
        message: `${delivered} of ${wanted} leads${unknownNote}`,
        last: page.length < limit || delivered >= wanted,
      };
      const last = page.at(-1);
      if (!last || page.length < limit) break;
      afterId = last.id;
    }
  },
});
