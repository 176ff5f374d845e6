import { requireRole } from '../src/accounts/roles.ts';
import {
  chargedSince,
  countStatement,
  listStatement,
  monthStart,
  type StatementLine,
  type StatementLineKind,
} from '../src/billing/statement.ts';
import { AccountRef } from './account.ts';
import { builder } from './builder.ts';
import {
  AFTER_DESCRIPTION,
  bigintCursor,
  connectionOf,
  connectionType,
  FIRST_DESCRIPTION,
  pageSize,
} from './connection.ts';
import { RunRef } from './run.ts';
import { LEDGER_PERMISSION } from './wallet.ts';

const KIND_TEXT: Record<StatementLineKind, string> = {
  run: 'A run: its hold, release and charge together.',
  pipeline: 'A pipeline: its single hold, its steps’ runs and their charges, and what came back.',
  purchase: 'Credits bought (with the plan’s bonus).',
  plan_grant: 'The plan’s monthly credits.',
  refund: 'Money given back.',
};

const StatementLineKindEnum = builder.enumType('StatementLineKind', {
  description: 'What a statement line stands for.',
  values: Object.fromEntries(
    Object.entries(KIND_TEXT).map(([kind, text]) => [kind.toUpperCase(), { value: kind, description: text }]),
  ) as Record<string, { value: StatementLineKind; description: string }>,
});

const StatementLineRef = builder.objectRef<StatementLine>('StatementLine').implement({
  description:
    'One line of the statement: a run’s or a pipeline’s money movements as one, or a purchase, plan grant or ' +
    'refund; with the total balance after it.',
  fields: (t) => ({
    kind: t.field({ type: StatementLineKindEnum, description: 'What the line stands for.', resolve: (l) => l.kind }),
    amount: t.field({
      type: 'Money',
      description: 'Net change of the total balance (negative when spent; a run in flight shows its hold).',
      resolve: (l) => l.amountMicros,
    }),
    balance: t.field({
      type: 'Money',
      description:
        'The total balance after this line: the line below’s balance plus this amount (the newest line’s is the ' +
        'wallet’s).',
      resolve: (l) => l.balanceMicros,
    }),
    charged: t.field({
      type: 'Money',
      description: 'What the runs were charged (0 or more).',
      resolve: (l) => l.chargedMicros,
    }),
    held: t.field({
      type: 'Money',
      description: 'What the holds took at start (0 or more).',
      resolve: (l) => l.heldMicros,
    }),
    released: t.field({
      type: 'Money',
      description: 'What came back of the holds (0 or more).',
      resolve: (l) => l.releasedMicros,
    }),
    stillHeld: t.field({
      type: 'Money',
      description: 'What the holds still keep while the run or pipeline is in flight; 0 once settled.',
      resolve: (l) => l.stillHeldMicros,
    }),
    runId: t.exposeID('runId', { nullable: true, description: 'The run of a RUN line; null otherwise.' }),
    run: t.field({
      type: RunRef,
      nullable: true,
      description: 'The run of a RUN line; null otherwise, or once the run is deleted.',
      resolve: (l, _, ctx) => (l.runId ? ctx.loaders.run.load(l.runId) : null),
    }),
    pipelineId: t.exposeID('pipelineId', { nullable: true, description: 'The pipeline of a PIPELINE line.' }),
    entries: t.exposeInt('entries', { description: 'How many ledger entries the line sums.' }),
    note: t.exposeString('note', { nullable: true, description: 'What the first entry was for, for people.' }),
    firstAt: t.field({ type: 'DateTime', description: 'When its first entry was made.', resolve: (l) => l.firstAt }),
    at: t.field({ type: 'DateTime', description: 'When its last entry was made.', resolve: (l) => l.lastAt }),
  }),
});

const StatementLineConnectionRef = connectionType<StatementLine>('StatementLine', StatementLineRef, {
  description: 'A page of the account’s statement, newest line first.',
  totalCount: 'How many lines the statement has.',
});

const MAX_LINES = 100;

builder.objectField(AccountRef, 'statement', (t) =>
  t.field({
    type: StatementLineConnectionRef,
    description:
      'The ledger as a statement, newest first: one line per run and per pipeline, one per purchase, grant or ' +
      'refund, each with the balance after it (who may read `ledger` may read this: ROLE_REQUIRED otherwise).',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_LINES, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 20, MAX_LINES) }),
    resolve: async (account, args, ctx) => {
      requireRole(ctx.principal, LEDGER_PERMISSION);
      const first = pageSize(args.first, { max: MAX_LINES, byDefault: 20 });
      const before = bigintCursor(args.after);
      const { lines, hasNextPage } = await listStatement(ctx.core.db, account.id, {
        first,
        ...(before === undefined ? {} : { before }),
      });
      return connectionOf(lines, {
        cursorOf: (l) => l.lastEntryId.toString(),
        hasNextPage,
        totalCount: () => countStatement(ctx.core.db, account.id),
      });
    },
  }),
);

builder.objectField(AccountRef, 'spentThisMonth', (t) =>
  t.field({
    type: 'Money',
    description:
      'What the account’s runs were charged since the first of this month (UTC): the sum of the ledger’s charges, ' +
      'holds of runs in flight not counted (who may read `ledger` may read this: ROLE_REQUIRED otherwise).',
    resolve: (account, _, ctx) => {
      requireRole(ctx.principal, LEDGER_PERMISSION);
      return chargedSince(ctx.core.db, account.id, monthStart(ctx.core.clock()));
    },
  }),
);
