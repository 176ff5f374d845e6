import { leadRecord } from '../../src/endpoints/schemas.ts';
import type { SkippedRow } from '../../src/endpoints/enrichment.ts';
import { builder } from '../builder.ts';
import { outputTypeOf } from '../zod-output.ts';
import { list, num, str, type Rec } from './records.ts';

/**
 * What enrichment answers per row (`enrichLeads`, `enrichLocalBusinesses`, and a recorded job's rows,
 * enrichment-jobs.ts): the match status and key, the lead or business found, and why a row was skipped.
 */

export const MatchStatusEnum = builder.enumType('EnrichmentMatchStatus', {
  description: 'What an enrichment found for a row.',
  values: {
    MATCHED: { value: 'matched', description: 'Found; counted against the daily allowance.' },
    NOT_FOUND: { value: 'not_found', description: 'Nothing matched.' },
    DAILY_LIMIT_REACHED: {
      value: 'daily_limit_reached',
      description: 'Found, but the daily allowance was used up before this row; nothing is shown.',
    },
    SKIPPED: {
      value: 'skipped',
      description: 'Not looked up: nothing usable to match on (`skipped` says why); never counted.',
    },
  } as const,
});

const LeadMatchKeyEnum = builder.enumType('LeadMatchKey', {
  description: 'What a lead was matched by, in order of priority.',
  values: {
    EMAIL: { value: 'email', description: 'The email address.' },
    SOCIAL: { value: 'social', description: 'The social profile URL.' },
    MOBILE: { value: 'mobile', description: 'The mobile number (its last 10 digits).' },
    NAME: { value: 'name', description: 'The full name at the company (its domain, or its name).' },
    DOMAIN: { value: 'domain', description: 'The company domain (its most senior person).' },
  } as const,
});

const LocalBusinessMatchKeyEnum = builder.enumType('LocalBusinessMatchKey', {
  description: 'What a local business was matched by, in order of priority.',
  values: {
    PHONE: { value: 'phone', description: 'The phone number.' },
    NAME: { value: 'name', description: 'The name with the city or postal code.' },
    WEBSITE: { value: 'website', description: 'The website.' },
  } as const,
});

const EnrichedLeadRef = outputTypeOf(
  leadRecord,
  'EnrichedLead',
  'The lead found for a row: the person, then the company (as REST’s lead records); fields without data are null.',
);

const ReviewRef = builder.objectRef<Rec>('EnrichedLocalBusinessReview').implement({
  description: 'A review of a local business.',
  fields: (t) => ({
    author: t.string({ description: 'The reviewer’s name as shown.', resolve: (r) => r.author as string }),
    rating: t.int({ description: 'Stars given, 1 to 5.', resolve: (r) => r.rating as number }),
    text: t.string({ nullable: true, description: 'The review’s text.', resolve: str('text') }),
    publishedAt: t.string({ description: 'When it was published.', resolve: (r) => r.published_at as string }),
  }),
});

const EnrichedLocalBusinessRef = builder.objectRef<Rec>('EnrichedLocalBusiness').implement({
  description: 'The local business found for a row.',
  fields: (t) => ({
    name: t.string({ nullable: true, description: 'The business’s name.', resolve: str('business_name') }),
    phone: t.string({ nullable: true, description: 'Phone number.', resolve: str('phone') }),
    website: t.string({ nullable: true, description: 'Website.', resolve: str('website') }),
    emails: t.stringList({ description: 'Email addresses found.', resolve: list('emails') }),
    address: t.string({ nullable: true, description: 'The address in one line.', resolve: str('address') }),
    city: t.string({ nullable: true, description: 'City.', resolve: str('city') }),
    state: t.string({ nullable: true, description: 'State or region.', resolve: str('state') }),
    postalCode: t.string({ nullable: true, description: 'Postal code.', resolve: str('postal_code') }),
    countryCode: t.string({
      nullable: true,
      description: 'Two-letter ISO country code.',
      resolve: str('country_code'),
    }),
    category: t.string({ nullable: true, description: 'Its category.', resolve: str('category') }),
    rating: t.float({ nullable: true, description: 'Average rating, 1 to 5.', resolve: num('rating') }),
    reviewCount: t.int({ nullable: true, description: 'Number of reviews.', resolve: num('review_count') }),
    reviews: t.field({
      type: [ReviewRef],
      description: 'Its latest reviews.',
      resolve: (r) => (r.reviews ?? []) as Rec[],
    }),
    contactPerson: t.string({
      nullable: true,
      description: 'A contact person, when known.',
      resolve: str('contact_person'),
    }),
  }),
});

/** A REST answer row (the caller's row, then what was found) with the emails the caller sent. */
export interface EnrichedRow {
  row: Rec;
  sentEmails: ReadonlySet<unknown>;
}

export const LeadEnrichmentRowRef = builder.objectRef<EnrichedRow>('LeadEnrichmentRow').implement({
  description: 'What lead enrichment found for one row, in the order the rows were sent.',
  fields: (t) => ({
    matchStatus: t.field({
      type: MatchStatusEnum,
      description: 'Whether the row matched.',
      resolve: (r) => r.row.match_status as 'matched',
    }),
    matchedBy: t.field({
      type: LeadMatchKeyEnum,
      nullable: true,
      description: 'What it matched by; null unless MATCHED.',
      resolve: (r) => (r.row.matched_by ?? null) as 'email' | null,
    }),
    lead: t.field({
      type: EnrichedLeadRef,
      nullable: true,
      description: 'The lead found; null unless MATCHED.',
      resolve: ({ row, sentEmails }) => {
        if (row.match_status !== 'matched') return null;
        // REST's row is the caller's row with the lead's fields written over it: an email the caller sent
        // stays when the lead found (by another key, as email matches first) has none. It is not the lead's.
        return row.matched_by !== 'email' && sentEmails.has(row.email) ? { ...row, email: null } : row;
      },
    }),
  }),
});

export const LocalBusinessEnrichmentRowRef = builder.objectRef<EnrichedRow>('LocalBusinessEnrichmentRow').implement({
  description: 'What local-business enrichment found for one row, in the order the rows were sent.',
  fields: (t) => ({
    matchStatus: t.field({
      type: MatchStatusEnum,
      description: 'Whether the row matched.',
      resolve: (r) => r.row.match_status as 'matched',
    }),
    matchedBy: t.field({
      type: LocalBusinessMatchKeyEnum,
      nullable: true,
      description: 'What it matched by; null unless MATCHED.',
      resolve: (r) => (r.row.matched_by ?? null) as 'phone' | null,
    }),
    business: t.field({
      type: EnrichedLocalBusinessRef,
      nullable: true,
      description: 'The business found; null unless MATCHED.',
      resolve: ({ row }) => (row.match_status === 'matched' ? row : null),
    }),
  }),
});

export const SkippedRowRef = builder.objectRef<SkippedRow>('EnrichmentSkippedRow').implement({
  description: 'A row left out because it had nothing usable to match on; it is never counted.',
  fields: (t) => ({
    row: t.exposeInt('row', { description: 'Its place among the rows sent, from 1.' }),
    reasons: t.exposeStringList('reasons', {
      description: 'Why, in plain words (“no email, LinkedIn URL, mobile, company domain, …”), the last the summary.',
    }),
  }),
});

/** Rows as the row types read them, each with the emails the caller sent. */
export const rowsWithSent = (rows: Rec[], sentEmails: ReadonlySet<unknown>): EnrichedRow[] =>
  rows.map((row) => ({ row, sentEmails }));
