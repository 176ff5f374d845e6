import type { ScheduleEvent } from '../src/events/topics.ts';
import { findSchedule, listSchedules } from '../src/workflows/schedules.ts';
import { builder } from './builder.ts';
import type { GraphQLContext } from './context.ts';
import { ScheduleRef } from './workflows.ts';

/** A schedule's events as a subscription: `scheduleEvents` (src/workflows/schedules.ts publishes them). */

const ScheduleEventKindEnum = builder.enumType('ScheduleEventKind', {
  description: 'What happened to a schedule.',
  values: {
    PAUSED: {
      value: 'paused',
      description: 'It paused itself: its account could not pay, or its plan no longer allows the tool.',
    },
  } as const,
});

const ScheduleEventRef = builder.objectRef<ScheduleEvent>('ScheduleEvent').implement({
  description: 'A change of one of the account’s schedules (the webhook event `schedule.paused`).',
  fields: (t) => ({
    kind: t.field({ type: ScheduleEventKindEnum, description: 'What happened.', resolve: (e) => e.kind }),
    reason: t.exposeString('reason', { description: 'Why, in words.' }),
    at: t.field({ type: 'DateTime', description: 'When.', resolve: (e) => e.at }),
    schedule: t.field({
      type: ScheduleRef,
      nullable: true,
      description: 'The schedule as it is now; null once deleted.',
      resolve: (e, _, ctx) => findSchedule(ctx.core.db, ctx.principal.accountId, e.scheduleId).catch(() => null),
    }),
  }),
});

/** The account's paused schedules as events, then its schedules' events as they come. */
async function* pausedThenLive(core: GraphQLContext['core'], accountId: string): AsyncGenerator<ScheduleEvent> {
  // Following first: a schedule that pauses while the paused ones are read is heard, not missed.
  const live = await core.events.subscribe('scheduleEvents', accountId);
  try {
    for (const schedule of await listSchedules(core.db, accountId))
      if (schedule.pausedAt)
        yield {
          kind: 'paused',
          scheduleId: schedule.id,
          taskId: schedule.taskId,
          reason: schedule.pausedReason ?? '',
          at: schedule.pausedAt.toISOString(),
        };
    yield* live;
  } finally {
    await live.return();
  }
}

builder.subscriptionField('scheduleEvents', (t) =>
  t.field({
    type: ScheduleEventRef,
    description:
      'The account’s schedules: those paused now first, then each that pauses itself from now on, from any worker ' +
      'process.',
    subscribe: (_, __, ctx) => pausedThenLive(ctx.core, ctx.principal.accountId),
    resolve: (event) => event,
  }),
);
