import type { LeadPreviewRow } from '../../src/catalog/leads/preview.ts';
import type { LeadRow } from '../../src/catalog/leads/query.ts';
import { MAX_REVEAL } from '../../src/catalog/leads/preview.ts';
import { leadDatabasePreview, revealLeadsEndpoint } from '../../src/endpoints/api/database.ts';
import { graphqlFieldOf } from '../../src/endpoints/define.ts';
import { callEndpoint } from '../../src/http/pipeline.ts';
import { ValidationError } from '../../src/shared/errors.ts';
import { builder } from '../builder.ts';
import { AFTER_DESCRIPTION, connectionType, FIRST_DESCRIPTION } from '../connection.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from '../errors.ts';
import { LeadFilterInput, LeadPersonRef, LeadRef, leadPage, MAX_LEADS, SearchTranslationRef } from '../leads.ts';
import { globalId } from '../node.ts';

/*
 * Searching is free, contact details cost: `leadSearch` is the lead database without emails and phones,
 * counting nothing; `revealLeads` hands over chosen people with them, counted like `leads`.
 */

const LEAD_ID = /^lead_([1-9]\d{0,18})$/;

const LeadPreviewRef = builder.objectRef<LeadPreviewRow>('LeadPreview').implement({
  description:
    'A person of the lead database as the free search (`leadSearch`) shows them: everything but the email, phone ' +
    'and mobile, with whether each exists. `revealLeads` hands over the contact details.',
  interfaces: [LeadPersonRef],
  fields: (t) => ({
    id: t.id({
      description: 'The lead’s global id, the same as `Lead.id`: `revealLeads(ids:)` takes it.',
      resolve: (p) => globalId('lead', p.id),
    }),
    hasEmail: t.exposeBoolean('has_email', { description: 'The person has a work email (revealed by `revealLeads`).' }),
    emailStatus: t.exposeString('email_status', {
      nullable: true,
      description: 'How sure the email is, e.g. verified; null without an email.',
    }),
    hasPhone: t.exposeBoolean('has_phone', { description: 'The person has a phone or mobile number.' }),
    received: t.exposeBoolean('received', {
      description: 'The account has received this lead already: revealing it again counts nothing.',
    }),
  }),
});

type Extra = { totalCountIsEstimate: boolean; searchTranslation: unknown; dailyAllowanceRemaining: number };

const LeadPreviewConnectionRef = connectionType<LeadPreviewRow, Extra>('LeadPreview', LeadPreviewRef, {
  totalCountMayBeEstimate: true,
  description: 'A page of the free lead search, in id order: people without contact details.',
  totalCount: 'Size of the whole search: exact, or an estimate when `totalCountIsEstimate`.',
  fields: (t) => ({
    searchTranslation: t.field({
      type: SearchTranslationRef as never,
      nullable: true,
      description: 'How the filter’s `url` was read (applied, broadened, unsupported, ignored); null without a url.',
      resolve: (p: Extra) => (p.searchTranslation ?? null) as never,
    }),
    dailyAllowanceRemaining: t.int({
      description:
        'Records left in today’s database allowance (resets at midnight UTC): what `revealLeads` and `leads` may ' +
        'still hand over. The preview takes none.',
      resolve: (p: Extra) => p.dailyAllowanceRemaining,
    }),
  }),
});

builder.queryField(graphqlFieldOf(leadDatabasePreview), (t) =>
  t.field({
    type: LeadPreviewConnectionRef,
    nullable: true,
    description:
      'The lead database’s free search: the same filters, paging, order and total as `leads`, the same plan ' +
      '(null with error PLAN_REQUIRED below it), but people come without email, phone and mobile (only ' +
      'whether each exists and the email’s status), and nothing counts against the daily allowance or is ' +
      'saved to the account. Reveal chosen people with `revealLeads`.',
    args: {
      filter: t.arg({ type: LeadFilterInput, description: 'What to search for; no filter searches everyone.' }),
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_LEADS, 50) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: (args) => ({ field: 10, multiplier: Math.min(args.first ?? 50, MAX_LEADS) }),
    resolve: (_, args, ctx) => leadPage(ctx, leadDatabasePreview, args),
  }),
);

type RevealPayload = { leads?: LeadRow[]; counted?: number; remaining?: number; userErrors: UserError[] };

const RevealLeadsPayloadRef = builder.objectRef<RevealPayload>('RevealLeadsPayload').implement({
  description: 'What `revealLeads` answers: the people with their contact details, and what they counted.',
  fields: (t) => ({
    leads: t.field({
      type: [LeadRef],
      nullable: true,
      description: 'The people asked for, in the order of `ids` (each once), with email and phone; null when refused.',
      resolve: (p) => p.leads ?? null,
    }),
    counted: t.int({
      nullable: true,
      description: 'Records taken from today’s allowance: the people the account had not received before.',
      resolve: (p) => p.counted ?? null,
    }),
    dailyAllowanceRemaining: t.int({
      nullable: true,
      description: 'Records left in today’s database allowance after this; null when refused.',
      resolve: (p) => p.remaining ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(revealLeadsEndpoint), (t) =>
  t.field({
    type: RevealLeadsPayloadRef,
    description:
      `Chosen people of the lead database with their contact details (1 to ${MAX_REVEAL} at once), the lead ` +
      'database’s plan. Each person the account has not received counts one record against the daily ' +
      'allowance and is saved to the account, as `leads` counts; received ones are free. All or nothing: ' +
      'NOT_FOUND at `ids.<i>` for an id of no person (or one on a do-not-contact list), DAILY_LIMIT_REACHED when ' +
      'the allowance left is smaller than the new people, PLAN_REQUIRED below the plan; then nothing is counted.',
    args: {
      ids: t.arg.idList({ required: true, description: 'The leads’ global ids (`LeadPreview.id`, `Lead.id`).' }),
    },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const ids = args.ids.map(String);
        const wrong = ids.flatMap((id, i) =>
          LEAD_ID.test(id) ? [] : [{ path: `ids.${i}`, message: 'not a lead’s id (LeadPreview.id)' }],
        );
        if (wrong.length > 0) throw new ValidationError(wrong);
        const { body: revealed } = await callEndpoint(
          ctx.core,
          ctx.principal,
          revealLeadsEndpoint,
          { ids: ids.map((id) => LEAD_ID.exec(id)?.[1] ?? '') },
          { shape: (r) => r },
        );
        for (const [id, company] of revealed.companies) ctx.loaders.company.prime(id, company);
        return { leads: revealed.rows, counted: revealed.counted, remaining: revealed.allowanceRemaining };
      }),
  }),
);
