import { z } from 'zod';
import { EXACT_TOTAL_LIMIT } from '../catalog/sql.ts';
import { DELIVERY_STATUSES, WEBHOOK_EVENTS } from '../../db/tables/webhooks.ts';
import { LEDGER_KINDS } from '../../db/tables/accounts.ts';
import { MAX_ENRICH_ROWS, PREVIEW_DESCRIPTION, PREVIEW_SAMPLE_SIZE } from './enrichment.ts';
import { usdAmount } from '../shared/amounts.ts';
import { peopleSearchTranslation } from '../catalog/leads/people-search-url.ts';
import { MAX_PURCHASE_USD, MIN_PURCHASE_USD } from '../billing/wallet.ts';
import { DELIVERY_EVENTS } from '../webhooks/deliveries.ts';
import { LEAD_EMAIL_STATUSES, wordList } from '../shared/email-status.ts';

/**
 * The request and response bodies of the declared endpoints that have no zod schema in their
 * services: answers (checked against live responses by test/faces/rest/openapi.test.ts) and the enrichment
 * request bodies, which the services validate by hand. OpenAPI and the MCP tools read them.
 */

const dollars = z
  .string()
  .regex(/^-?\d+\.\d{2,6}$/)
  .describe('Decimal US dollars with at least 2 decimals, e.g. "48.00" or "47.9961".');
const timestamp = z.iso.datetime({ offset: true });

export const walletObject = z
  .object({
    balance_dollars: dollars.describe('Plan credits.'),
    purchased_credits_dollars: dollars.describe('Purchased credits (spent first, never expire).'),
    total_balance_dollars: dollars,
  })
  .strict();
const paymentsMode = z
  .enum(['stripe', 'demo', 'none'])
  .describe(
    'How credits are paid on this server: stripe (by card), ' +
      'demo (recorded without payment) or none (credits cannot be bought; the operator grants them).',
  );
/** The wallet answer: the spec's three balances and what running runs hold now. */
const walletWithHolds = walletObject
  .extend({
    held_dollars: dollars.describe(
      'What running and waiting runs hold now, already taken from the balances above: ' +
        'each run gives its hold back when it ends and is charged ' +
        'for its results (the ledger lists both, with the run id).',
    ),
  })
  .strict();
export const walletResponse = z
  .object({ wallet: walletWithHolds, payments: z.object({ mode: paymentsMode }).strict() })
  .strict();

export const buyCreditsRequest = z
  .object({
    amount: z
      .number()
      .min(MIN_PURCHASE_USD)
      .max(MAX_PURCHASE_USD)
      .multipleOf(0.01)
      .describe(
        `USD, ${MIN_PURCHASE_USD} to ${MAX_PURCHASE_USD}, at most 2 decimals; ` +
          '49, 50, 149 and 649 are adjusted down to 48, 48, 148 and 648.',
      ),
  })
  .strict();
export const buyCreditsResponse = z
  .object({
    success: z.literal(true),
    amount: z.number().describe('USD charged, after any adjustment, without the bonus.'),
    original_amount: z.number(),
    was_adjusted: z.boolean(),
    message: z.string(),
    bonus: z.number().describe('USD of bonus credits the plan adds (0, 10 or 30 %).'),
    wallet: walletObject,
    payment: z
      .object({
        mode: z
          .enum(['stripe', 'demo'])
          .describe('stripe: charged to the card on file; demo: recorded without payment.'),
        payment_intent: z.string().nullable().describe('The Stripe PaymentIntent that paid it; null in demo mode.'),
      })
      .strict(),
  })
  .strict();

export const apolloStatus = z
  .object({ status: z.enum(['url-based', 'legacy']), message: z.string(), timestamp })
  .strict();

const pagination = z
  .object({
    page: z.int().nullable().describe('Null when paging by cursor (after).'),
    limit: z.int(),
    total: z.int().describe('Size of the whole search: exact, or an estimate when total_is_estimate is true.'),
    total_is_estimate: z
      .boolean()
      .describe(
        `True when more matched than the exact-count limit (${EXACT_TOTAL_LIMIT.toLocaleString('en-US')} ` +
          'by default): total is then an estimate from a sample, to two significant digits.',
      ),
    next_after: z.string().nullable().describe('Cursor of the next page (send it as after); null at the end.'),
    has_more: z.boolean(),
  })
  .strict();
const dailyAllowance = z
  .object({ remaining: z.int().describe('Records (or matches) left today; resets at midnight UTC.') })
  .strict();

const str = z.string();
const strList = z.array(z.string());
const int = z.int();
const num = z.number();

/** The spec's lead record: person fields, then company fields; a field without data is left out. */
export const leadRecord = z
  .object({
    id: int,
    first_name: str,
    last_name: str,
    full_name: str,
    title: str.optional(),
    seniority: str.optional(),
    department: str.optional(),
    email: str.optional(),
    email_status: str.optional().describe(`How sure the email is: ${wordList(LEAD_EMAIL_STATUSES)}.`),
    phone: str.optional(),
    mobile: str.optional(),
    linkedin_url: str.optional(),
    city: str.optional(),
    state: str.optional(),
    country: str.optional(),
    company_name: str.optional(),
    company_domain: str.optional(),
    company_website: str.optional(),
    company_industry: str.optional(),
    company_size: str.optional(),
    employees_count: int.optional(),
    company_annual_revenue: usdAmount(num.optional()),
    company_city: str.optional(),
    company_state: str.optional(),
    company_country: str.optional(),
    keywords: strList.optional(),
    company_technologies: strList.optional(),
    company_founded: int.optional(),
    company_phone: str.optional(),
    company_linkedin_url: str.optional(),
    company_twitter_url: str.optional(),
    company_facebook_url: str.optional(),
  })
  .strict();

export { peopleSearchTranslation };

export const leadSearchResponse = z
  .object({
    leads: z.array(leadRecord),
    pagination,
    daily_allowance: dailyAllowance,
    search_translation: peopleSearchTranslation.optional(),
  })
  .strict();

/** A person of the free preview: the lead record without email, phone and mobile, with whether each exists. */
export const leadPreviewRecord = leadRecord
  .omit({ email: true, phone: true, mobile: true })
  .extend({
    has_email: z.boolean().describe('The person has a work email (reveal_leads hands it over).'),
    has_phone: z.boolean().describe('The person has a phone or mobile number.'),
    received: z.boolean().describe('The account has received this lead already: revealing it again counts nothing.'),
  })
  .strict();

export const leadPreviewResponse = z
  .object({
    leads: z.array(leadPreviewRecord),
    pagination,
    daily_allowance: z
      .object({
        remaining: z
          .int()
          .describe(
            'Records left today for revealing and the lead search (resets at midnight UTC); a preview takes none.',
          ),
      })
      .strict(),
    search_translation: peopleSearchTranslation.optional(),
  })
  .strict();

export const revealLeadsResponse = z
  .object({
    leads: z.array(leadRecord).describe('The people asked for, in the order of ids (each once), with email and phone.'),
    counted: z.int().describe('Records taken from today’s allowance: the people the account had not received before.'),
    daily_allowance: dailyAllowance,
  })
  .strict();

export const localBusinessRecord = z
  .object({
    id: int,
    place_id: str,
    name: str,
    category: str,
    street: str.optional(),
    city: str,
    state: str.optional(),
    postal_code: str.optional(),
    country_code: str,
    lat: num,
    lng: num,
    phone: str.optional(),
    website: str.optional(),
    emails: strList,
    rating: num.optional(),
    review_count: int,
    opening_hours: strList.optional(),
    contact_name: str.optional(),
  })
  .strict();
export const localBusinessSearchResponse = z
  .object({ businesses: z.array(localBusinessRecord), pagination, daily_allowance: dailyAllowance })
  .strict();

export const storeRecord = z
  .object({
    id: int,
    domain: str,
    name: str.optional(),
    platform: str.optional(),
    plan_tier: str.optional(),
    country_code: str.optional(),
    city: str.optional(),
    state: str.optional(),
    category: str.optional(),
    technologies: strList.optional(),
    apps: strList.optional(),
    instagram_url: str.optional(),
    facebook_url: str.optional(),
    tiktok_url: str.optional(),
    youtube_url: str.optional(),
    linkedin_url: str.optional(),
    twitter_url: str.optional(),
    pinterest_url: str.optional(),
    emails: strList.optional(),
    phones: strList.optional(),
    estimated_monthly_visits: int.optional(),
    estimated_monthly_sales: num.optional(),
    employee_count: int.optional(),
  })
  .strict();
export const storeSearchResponse = z
  .object({ stores: z.array(storeRecord), pagination, daily_allowance: dailyAllowance })
  .strict();

const enrichRows = (need: string) =>
  z
    .array(z.record(z.string(), z.unknown()))
    .min(1)
    .max(MAX_ENRICH_ROWS)
    .describe(
      `Rows to match, up to ${MAX_ENRICH_ROWS.toLocaleString('en-US')} per request; ` +
        `each needs at least one of ${need}. Other fields are passed through to the answer.`,
    );
const preview = z.boolean().optional().describe(PREVIEW_DESCRIPTION);

export const enrichLeadsRequest = z
  .object({
    rows: enrichRows(
      'email, social (also social_url, linkedin_url), mobile (also phone), domain (also company_domain, website)',
    ),
    preview,
  })
  .strict()
  .meta({ examples: [{ rows: [{ email: 'jane.doe@acme.com' }, { domain: 'acme.com' }], preview: false }] });
export const enrichLocalBusinessesRequest = z
  .object({
    rows: enrichRows(
      'phone; name (or business_name) with city or postal_code; website. ' +
        'Optional: state (separates same-name places) and country (ISO code or name)',
    ),
    preview,
  })
  .strict()
  .meta({ examples: [{ rows: [{ phone: '(303) 555-0100' }, { name: 'Smile Dental', city: 'Denver', state: 'CO' }] }] });

const matchStatus = z.enum(['matched', 'not_found', 'daily_limit_reached']);
const enrichedRow = (matchedBy: z.ZodType, fields: Record<string, z.ZodType>) =>
  z
    .looseObject({ match_status: matchStatus, matched_by: matchedBy.nullable(), ...fields })
    .describe('The input row, then what was found; rows not found carry only match_status and matched_by.');

const enrichedLead = enrichedRow(z.enum(['email', 'social', 'mobile', 'domain']), {});
const enrichedBusiness = enrichedRow(z.enum(['phone', 'name', 'website']), {
  business_name: str.optional(),
  emails: strList.optional(),
  address: str.optional(),
  review_count: int.optional(),
  reviews: z.array(z.object({ author: str, rating: int, text: str.nullable(), published_at: str }).strict()).optional(),
  contact_person: str.nullable().optional(),
});

const enrichResponse = (row: z.ZodType, by: readonly string[]) => {
  const summary = z
    .object({
      total: int,
      matched: int,
      not_found: int,
      by: z.object(Object.fromEntries(by.map((k) => [k, int]))).strict(),
    })
    .strict();
  return z.union([
    z.object({ rows: z.array(row), summary, daily_allowance: dailyAllowance }).strict(),
    z
      .object({
        preview: z.literal(true),
        summary,
        sample: z
          .array(row)
          .max(PREVIEW_SAMPLE_SIZE)
          .describe('The first matched rows, their found emails, phone numbers and profile URLs masked.'),
      })
      .strict(),
  ]);
};
export const enrichLeadsResponse = enrichResponse(enrichedLead, ['email', 'social', 'mobile', 'domain']);
export const enrichLocalBusinessesResponse = enrichResponse(enrichedBusiness, ['phone', 'name', 'website']);

// Webhooks (src/rest/webhooks.ts): what the webhook services answer.

const webhookEvent = z.enum(WEBHOOK_EVENTS);
export const webhookView = z
  .object({ id: str, url: str, events: z.array(webhookEvent), description: str.nullable(), createdAt: timestamp })
  .strict();
export const createdWebhookResponse = z
  .object({
    webhook: webhookView
      .extend({ secret: str.describe('Signing secret (Standard Webhooks, whsec_…); shown this once.') })
      .strict(),
  })
  .strict();
export const webhookListResponse = z.object({ webhooks: z.array(webhookView) }).strict();
const deliveryView = z
  .object({
    id: str.describe('Also the webhook-id header of the delivery.'),
    event: z.enum(DELIVERY_EVENTS),
    runId: str.nullable(),
    url: str,
    status: z.enum(DELIVERY_STATUSES),
    attempts: int,
    responseStatus: int.nullable(),
    lastError: str.nullable(),
    createdAt: timestamp,
    lastAttemptAt: timestamp.nullable(),
    deliveredAt: timestamp.nullable(),
  })
  .strict();
export const testDeliveryResponse = z
  .object({ delivery: deliveryView.describe('The webhook.test delivery, queued (status pending).') })
  .strict();
export const deliveryListResponse = z
  .object({
    deliveries: z.array(deliveryView),
    nextAfter: str.nullable().describe('Cursor of the next page (send it as after); null at the end.'),
  })
  .strict();

// The ledger (GET /api/v1/wallet/ledger).

export const ledgerResponse = z
  .object({
    entries: z.array(
      z
        .object({
          id: str.describe('The entry id; entries come newest first, so a larger id is later.'),
          kind: z
            .enum(LEDGER_KINDS)
            .describe(
              'purchase, plan_grant, hold (a run reserved its estimate at start), ' +
                'release (the hold given back at its end), charge (its results, at its end) or refund.',
            ),
          amount_dollars: dollars.describe(
            'Change of the total balance: negative for a hold and a charge, ' +
              'positive for a release, a purchase or a grant.',
          ),
          plan_dollars: dollars.describe('Change of the plan credits.'),
          purchased_credits_dollars: dollars.describe('Change of the purchased credits.'),
          run_id: str.nullable().describe('The run of a hold, release or charge; null otherwise.'),
          note: str.nullable(),
          created_at: timestamp,
        })
        .strict(),
    ),
    next_after: str.nullable().describe('Cursor of the next (older) page: send it as after; null at the end.'),
  })
  .strict();
