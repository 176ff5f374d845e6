import type { GraphQLContext } from '../context.ts';
import {
  countEnrichmentJobs,
  enrichmentJobRows,
  type EnrichmentJobView,
  findEnrichmentJob,
  listEnrichmentJobs,
  rowsKept,
} from '../../src/endpoints/enrichment-jobs.ts';
import { builder } from '../builder.ts';
import {
  AFTER_DESCRIPTION,
  connectionOf,
  connectionType,
  FIRST_DESCRIPTION,
  notACursor,
  pageSize,
} from '../connection.ts';
import { pageComplexity } from '../identity/lists.ts';
import { NodeRef, registerNode } from '../node.ts';
import { LeadEnrichmentRowRef, LocalBusinessEnrichmentRowRef, rowsWithSent, SkippedRowRef } from './enrichment-rows.ts';

/**
 * The account's history of enrichment jobs (src/endpoints/enrichment-jobs.ts): files enriched with a
 * `fileName`, newest first, their counts, and their rows while they are kept (48 hours, like a run's).
 */

const JOB_ID = /^enj_[A-Za-z0-9_-]{16}$/;

const JobKindEnum = builder.enumType('EnrichmentJobKind', {
  description: 'What an enrichment job matched.',
  values: {
    LEADS: { value: 'leads', description: 'People, against the lead database (`enrichLeads`).' },
    LOCAL_BUSINESSES: {
      value: 'local_businesses',
      description: 'Local businesses, against the local-business database (`enrichLocalBusinesses`).',
    },
  } as const,
});

const readRows = new WeakMap<GraphQLContext, Map<string, ReturnType<typeof enrichmentJobRows>>>();

/** The job's rows, read once per job and request (its typed rows and skipped rows share them). */
function rowsOf(job: EnrichmentJobView, ctx: GraphQLContext) {
  let cache = readRows.get(ctx);
  if (!cache) {
    cache = new Map();
    readRows.set(ctx, cache);
  }
  let rows = cache.get(job.id);
  if (!rows) {
    rows = enrichmentJobRows(ctx.core, ctx.principal.accountId, job.id);
    cache.set(job.id, rows);
  }
  return rows;
}

const typedRows = async (job: EnrichmentJobView, ctx: GraphQLContext) => {
  const kept = await rowsOf(job, ctx);
  if (!kept) return null;
  // The emails the caller sent (a lead matched by another key without one of its own shows none).
  const sent = new Set(kept.inputs.map((input) => input.email).filter(Boolean));
  return rowsWithSent(kept.rows, sent);
};

const SentFieldRef = builder.objectRef<{ name: string; value: string }>('EnrichmentSentField').implement({
  description: 'A field of a row as it was sent.',
  fields: (t) => ({
    name: t.exposeString('name', {
      description: 'Its name as the service reads it (email, mobile_phone, company, …).',
    }),
    value: t.exposeString('value', { description: 'Its value.' }),
  }),
});

const SentRowRef = builder
  .objectRef<{ row: number; fields: { name: string; value: string }[] }>('EnrichmentSentRow')
  .implement({
    description: 'A row of an enrichment job as it was sent.',
    fields: (t) => ({
      row: t.exposeInt('row', { description: 'Its place among the rows sent, from 1.' }),
      fields: t.field({ type: [SentFieldRef], description: 'Its fields, in order.', resolve: (r) => r.fields }),
    }),
  });

export const EnrichmentJobRef = builder.objectRef<EnrichmentJobView>('EnrichmentJob').implement({
  description:
    'A file enriched in bulk (`enrichLeads` or `enrichLocalBusinesses` with a `fileName`): its counts, kept in the ' +
    'account’s history, and its rows, kept 48 hours like a run’s result rows. People on the do-not-contact list ' +
    'are left out of the rows whenever they are read, even when added after the job.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'enj_…' }),
    kind: t.field({ type: JobKindEnum, description: 'What it matched.', resolve: (j) => j.kind }),
    fileName: t.exposeString('fileName', { description: 'The name of the file enriched, as given.' }),
    total: t.exposeInt('total', { description: 'Rows in the file.' }),
    matched: t.exposeInt('matched', { description: 'Rows matched (and counted against the daily allowance).' }),
    notFound: t.exposeInt('notFound', { description: 'Rows looked up with no match.' }),
    skipped: t.exposeInt('skipped', { description: 'Rows skipped for having nothing usable to match on.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When it ran.', resolve: (j) => j.createdAt }),
    expiresAt: t.field({
      type: 'DateTime',
      description: 'Until when its rows are kept; the counts stay after.',
      resolve: (j) => j.expiresAt,
    }),
    rowsAvailable: t.boolean({
      description: 'Whether its rows can still be read (until `expiresAt`).',
      resolve: (j, _, ctx) => rowsKept(j, ctx.core.clock()),
    }),
    leadRows: t.field({
      type: [LeadEnrichmentRowRef],
      nullable: true,
      description: 'Every row, in the file’s order, as `enrichLeads` answered; null for local businesses or expired.',
      resolve: (j, _, ctx) => (j.kind === 'leads' ? typedRows(j, ctx) : null),
    }),
    businessRows: t.field({
      type: [LocalBusinessEnrichmentRowRef],
      nullable: true,
      description:
        'Every row, in the file’s order, as `enrichLocalBusinesses` answered; null for people or once expired.',
      resolve: (j, _, ctx) => (j.kind === 'local_businesses' ? typedRows(j, ctx) : null),
    }),
    sentRows: t.field({
      type: [SentRowRef],
      nullable: true,
      description: 'Every row as it was sent, in the file’s order (to join with the rows); null once expired.',
      resolve: async (j, _, ctx) => {
        const kept = await rowsOf(j, ctx);
        if (!kept) return null;
        return kept.inputs.map((input, i) => ({
          row: i + 1,
          fields: Object.entries(input).map(([name, value]) => ({ name, value: String(value) })),
        }));
      },
    }),
    skippedRows: t.field({
      type: [SkippedRowRef],
      nullable: true,
      description: 'The rows skipped, with why; null once the rows have expired.',
      resolve: async (j, _, ctx) => {
        const kept = await rowsOf(j, ctx);
        if (!kept) return null;
        return kept.reasons.flatMap((reasons, i) => (reasons ? [{ row: i + 1, reasons }] : []));
      },
    }),
  }),
});

registerNode('enj', 'EnrichmentJob', {
  keepsPrefix: true,
  localId: JOB_ID,
  load: (ids, ctx) =>
    Promise.all(ids.map(async (id) => (await findEnrichmentJob(ctx.core.db, ctx.principal.accountId, id)) ?? null)),
});

const EnrichmentJobConnectionRef = connectionType<EnrichmentJobView>('EnrichmentJob', EnrichmentJobRef, {
  description: 'A page of the account’s enrichment jobs, newest first.',
  totalCount: 'How many enrichment jobs the account’s history holds.',
});

builder.queryField('enrichmentJobs', (t) =>
  t.field({
    type: EnrichmentJobConnectionRef,
    description: 'The account’s history of files enriched in bulk, newest first.',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(100, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) => {
      const first = pageSize(args.first, { max: 100, byDefault: 20 });
      if (args.after && !JOB_ID.test(args.after)) throw notACursor();
      const page = await listEnrichmentJobs(ctx.core.db, ctx.principal.accountId, {
        first,
        after: args.after ?? undefined,
      });
      if (!page) throw notACursor();
      return connectionOf(page.slice(0, first), {
        cursorOf: (j) => j.id,
        hasNextPage: page.length > first,
        totalCount: () => countEnrichmentJobs(ctx.core.db, ctx.principal.accountId),
      });
    },
  }),
);

builder.queryField('enrichmentJob', (t) =>
  t.field({
    type: EnrichmentJobRef,
    nullable: true,
    description: 'One of the account’s enrichment jobs; null for an unknown id or another account’s.',
    args: { id: t.arg.id({ required: true, description: 'The job’s id (enj_…).' }) },
    resolve: async (_, { id }, ctx) =>
      JOB_ID.test(String(id))
        ? ((await findEnrichmentJob(ctx.core.db, ctx.principal.accountId, String(id))) ?? null)
        : null,
  }),
);
