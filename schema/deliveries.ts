import { type Delivery, deliveryProblemTable, ROW_DELIVERY_STATUSES } from '../db/tables/destinations.ts';
import { deliveryProblems, findDelivery, listDeliveries } from '../src/destinations/deliveries.ts';
import { deliveryView } from '../src/destinations/delivery-events.ts';
import { findDestination } from '../src/destinations/destinations.ts';
import { getRowDelivery, listRowDeliveries } from '../src/endpoints/api/destinations.ts';
import { graphqlFieldOf } from '../src/endpoints/define.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { ValidationError } from '../src/shared/errors.ts';
import { getPipeline } from '../src/workflows/pipelines.ts';
import { builder } from './builder.ts';
import { AFTER_DESCRIPTION, connectionType, FIRST_DESCRIPTION } from './connection.ts';
import type { GraphQLContext } from './context.ts';
import { DestinationRef } from './destinations.ts';
import { pageComplexity, pageOf } from './identity/lists.ts';
import { NodeRef, registerNode } from './node.ts';
import { PipelineRef } from './pipelines.ts';
import { enumName } from './connected-providers.ts';
import { RunRef } from './run.ts';

/**
 * Deliveries (src/destinations/deliveries.ts): one run's (or pipeline's) rows sent to one destination,
 * with its counts and the rows skipped or refused; followed live by the `delivery` subscription.
 */

type Status = Delivery['status'];

const STATUS_TEXT: Partial<Record<Status, string>> = {
  queued: 'Waiting for a worker.',
  running: 'Sending rows.',
  waiting: 'The provider’s allowance for the day is spent; it goes on when the provider allows.',
  succeeded: 'Every row was sent or logged (skipped or refused with the reason).',
  failed: 'It could not be sent; the message says why.',
  paused: 'Stopped with the reason (its connection broke, its destination is paused); it does not go on by itself.',
};

/** Where a delivery no longer changes by itself: what ends its subscription. */
const ENDED: readonly Status[] = ['succeeded', 'failed', 'paused'];
const isEnded = (status: Status) => ENDED.includes(status);

const DeliveryStatusEnum = builder.enumType('DeliveryStatus', {
  description: 'Where a delivery of rows stands.',
  values: Object.fromEntries(
    ROW_DELIVERY_STATUSES.map((s) => [enumName(s), { value: s, description: STATUS_TEXT[s] ?? `It is ${s}.` }]),
  ) as Record<string, { value: Status; description: string }>,
});

type ProblemOutcome = (typeof deliveryProblemTable.outcome.enumValues)[number];
const OUTCOME_TEXT: Record<ProblemOutcome, string> = {
  skipped: 'Not sent: it lacks what the destination matches records by (a contact without an email…).',
  failed: 'Refused by the provider (an invalid value, a field the provider lacks…).',
};
const ProblemOutcomeEnum = builder.enumType('DeliveryProblemOutcome', {
  description: 'What happened to a row that was not delivered.',
  values: Object.fromEntries(
    deliveryProblemTable.outcome.enumValues.map((o) => [enumName(o), { value: o, description: OUTCOME_TEXT[o] }]),
  ) as Record<string, { value: ProblemOutcome; description: string }>,
});

type Problem = Awaited<ReturnType<typeof deliveryProblems>>[number];
const DeliveryProblemRef = builder.objectRef<Problem>('DeliveryProblem').implement({
  description: 'A row a delivery skipped or the provider refused, with the reason.',
  fields: (t) => ({
    row: t.exposeInt('row', { description: 'The row’s place among the rows delivered, from 0.' }),
    outcome: t.field({ type: ProblemOutcomeEnum, description: 'What happened to it.', resolve: (p) => p.outcome }),
    reason: t.exposeString('reason', { description: 'Why, in words.' }),
  }),
});

const MAX_PROBLEMS = 100;

export const DeliveryRef = builder.objectRef<Delivery>('Delivery').implement({
  description:
    'One run’s (or one pipeline’s) rows sent to a destination, in batches the provider takes; resumable and ' +
    'idempotent. Follow it live with the `delivery` subscription.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'dlv_…: its global id.' }),
    status: t.field({ type: DeliveryStatusEnum, description: 'Where it stands.', resolve: (d) => d.status }),
    message: t.exposeString('message', { description: 'Where it stands, in words.' }),
    ended: t.boolean({
      description: 'True once it changes no more by itself (SUCCEEDED, FAILED or PAUSED).',
      resolve: (d) => isEnded(d.status),
    }),
    total: t.exposeInt('total', { description: 'Rows to deliver (0 until it starts).' }),
    sent: t.exposeInt('sent', { description: 'Rows sent to the provider so far.' }),
    created: t.exposeInt('created', { description: 'Records the provider created.' }),
    updated: t.exposeInt('updated', { description: 'Records the provider updated (matched to one it had).' }),
    skipped: t.exposeInt('skipped', { description: 'Rows not sent (see `problems`).' }),
    failed: t.exposeInt('failed', { description: 'Rows the provider refused (see `problems`).' }),
    problems: t.field({
      type: [DeliveryProblemRef],
      description: 'The rows it skipped or the provider refused, in row order, each with the reason.',
      args: {
        first: t.arg.int({ description: `How many, 1 to ${MAX_PROBLEMS}; default ${MAX_PROBLEMS}.` }),
      },
      complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? MAX_PROBLEMS, MAX_PROBLEMS) }),
      resolve: (d, args, ctx) => {
        const first = args.first ?? MAX_PROBLEMS;
        if (!Number.isInteger(first) || first < 1 || first > MAX_PROBLEMS)
          throw new ValidationError([{ path: 'first', message: `must be between 1 and ${MAX_PROBLEMS}` }]);
        return deliveryProblems(ctx.core.db, d.id, first);
      },
    }),
    destination: t.field({
      type: DestinationRef,
      nullable: true,
      description: 'Where the rows go.',
      resolve: (d, _, ctx) => findDestination(ctx.core.db, ctx.principal.accountId, d.destinationId).catch(() => null),
    }),
    run: t.field({
      type: RunRef,
      nullable: true,
      description: 'The run whose rows it delivers; null for a pipeline’s.',
      resolve: (d, _, ctx) => (d.runId ? ctx.loaders.run.load(d.runId) : null),
    }),
    pipeline: t.field({
      type: PipelineRef,
      nullable: true,
      description: 'The pipeline whose joined table it delivers; null for a run’s.',
      resolve: (d, _, ctx) =>
        d.pipelineId ? getPipeline(ctx.core.db, ctx.principal.accountId, d.pipelineId).catch(() => null) : null,
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was queued.', resolve: (d) => d.createdAt }),
    startedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it started sending.',
      resolve: (d) => d.startedAt,
    }),
    finishedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it succeeded.',
      resolve: (d) => d.finishedAt,
    }),
  }),
});

registerNode('dlv', 'Delivery', {
  keepsPrefix: true,
  localId: /^dlv_[A-Za-z0-9]{1,64}$/,
  load: (ids, ctx) =>
    Promise.all(ids.map((id) => findDelivery(ctx.core.db, ctx.principal.accountId, id).catch(() => null))),
});

const DeliveryConnectionRef = connectionType<Delivery>('Delivery', DeliveryRef, {
  description: 'A page of deliveries, newest first (of the newest 100).',
  totalCount: 'How many deliveries the list holds (at most 100, the newest).',
});

const pageArgs = {
  first: FIRST_DESCRIPTION(100, 20),
  after: AFTER_DESCRIPTION,
};

builder.queryField(graphqlFieldOf(listRowDeliveries), (t) =>
  t.field({
    type: DeliveryConnectionRef,
    description: 'The account’s newest 100 deliveries, newest first, with their counts.',
    args: {
      first: t.arg.int({ description: pageArgs.first }),
      after: t.arg.string({ description: pageArgs.after }),
      runId: t.arg.id({ description: 'Only this run’s.' }),
      destination: t.arg.id({ description: 'Only to this destination (dest_…).' }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) => {
      const filter = {
        ...(args.runId ? { runId: String(args.runId) } : {}),
        ...(args.destination ? { destination: String(args.destination) } : {}),
      };
      const called = await callEndpoint(ctx.core, ctx.principal, listRowDeliveries, filter, { shape: (d) => d });
      return pageOf(called.body, args);
    },
  }),
);

builder.queryField(graphqlFieldOf(getRowDelivery), (t) =>
  t.field({
    type: DeliveryRef,
    nullable: true,
    description: 'A delivery by id (dlv_…); null when the account has none.',
    args: { id: t.arg.id({ required: true, description: 'Its id.' }) },
    resolve: (_, args, ctx) => findDelivery(ctx.core.db, ctx.principal.accountId, String(args.id)).catch(() => null),
  }),
);

builder.objectField(DestinationRef, 'deliveries', (t) =>
  t.field({
    type: DeliveryConnectionRef,
    description: 'Its newest 100 deliveries, newest first.',
    args: {
      first: t.arg.int({ description: pageArgs.first }),
      after: t.arg.string({ description: pageArgs.after }),
    },
    complexity: pageComplexity,
    resolve: async (d, args, ctx) =>
      pageOf(await listDeliveries(ctx.core.db, ctx.principal.accountId, { destinationId: d.id }), args),
  }),
);

builder.objectField(RunRef, 'deliveries', (t) =>
  t.field({
    type: DeliveryConnectionRef,
    description: 'The deliveries of its rows to the destinations its start named, newest first.',
    args: {
      first: t.arg.int({ description: pageArgs.first }),
      after: t.arg.string({ description: pageArgs.after }),
    },
    complexity: pageComplexity,
    resolve: async (run, args, ctx) =>
      pageOf(await listDeliveries(ctx.core.db, ctx.principal.accountId, { runId: run.id }), args),
  }),
);

/** The delivery now, then after each change of it (each batch the provider acknowledged), until it ends. */
async function* followDelivery(core: GraphQLContext['core'], accountId: string, id: string): AsyncGenerator<Delivery> {
  // Following first: a change made while the delivery is read is heard, not missed.
  const events = await core.events.subscribe('deliveryEvents', accountId);
  try {
    let delivery = await findDelivery(core.db, accountId, id);
    let shown = JSON.stringify(deliveryView(delivery));
    yield delivery;
    while (!isEnded(delivery.status)) {
      const next = await events.next();
      if (next.done) return;
      if (next.value.id !== id) continue;
      delivery = await findDelivery(core.db, accountId, id);
      // Changes heard together are read as one: the same delivery is not sent twice.
      const view = JSON.stringify(deliveryView(delivery));
      if (view === shown) continue;
      shown = view;
      yield delivery;
    }
  } finally {
    await events.return();
  }
}

builder.subscriptionField('delivery', (t) =>
  t.field({
    type: DeliveryRef,
    description:
      'A delivery now, then after every change of it (each batch the provider acknowledged, its end), from any ' +
      'worker process; completes once it has SUCCEEDED, FAILED or PAUSED. DELIVERY_NOT_FOUND for another ' +
      'account’s id.',
    args: { id: t.arg.id({ required: true, description: 'Its id (dlv_…).' }) },
    subscribe: async (_, args, ctx) => {
      await findDelivery(ctx.core.db, ctx.principal.accountId, String(args.id));
      return followDelivery(ctx.core, ctx.principal.accountId, String(args.id));
    },
    resolve: (delivery) => delivery,
  }),
);
