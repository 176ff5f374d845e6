import { PLANS, SUBSCRIPTION_STATUSES, type Account } from '../db/tables/accounts.ts';
import { getAccount } from '../src/accounts/accounts.ts';
import { PLAN_PRICE_USD } from '../src/billing/plans.ts';
import { builder } from './builder.ts';
import { NodeRef, registerNode } from './node.ts';

export const PlanEnum = builder.enumType('Plan', {
  description: 'A subscription plan; a higher plan includes every gate of a lower one.',
  values: Object.fromEntries(
    PLANS.map((plan) => [
      plan.toUpperCase(),
      { value: plan, description: `The ${plan} plan, ${PLAN_PRICE_USD[plan]} USD/month.` },
    ]),
  ) as Record<Uppercase<(typeof PLANS)[number]>, { value: (typeof PLANS)[number]; description: string }>,
});

const SUBSCRIPTION_TEXT: Record<(typeof SUBSCRIPTION_STATUSES)[number], string> = {
  ACTIVE: 'Paid and current; the only status that may buy credits.',
  TRIAL: 'On trial: some tools cap what one run may take (the mobile finder’s lookups).',
  CANCELLED: 'Cancelled: buying credits is refused.',
};

const SubscriptionStatusEnum = builder.enumType('SubscriptionStatus', {
  description: 'Where the account’s subscription stands.',
  values: Object.fromEntries(
    SUBSCRIPTION_STATUSES.map((s) => [s, { value: s, description: SUBSCRIPTION_TEXT[s] }]),
  ) as Record<
    (typeof SUBSCRIPTION_STATUSES)[number],
    { value: (typeof SUBSCRIPTION_STATUSES)[number]; description: string }
  >,
});

export const AccountRef = builder.objectRef<Account>('Account');

AccountRef.implement({
  description: 'The account the API key belongs to: its plan, wallet, ledger, runs and webhooks.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The account’s global id (`acc_…`), also its id in the console and CLI.' }),
    name: t.exposeString('name', { description: 'The account’s name.' }),
    plan: t.field({
      type: PlanEnum,
      description: 'The account’s plan: which tools and databases it may use.',
      resolve: (a) => a.plan,
    }),
    subscriptionStatus: t.field({
      type: SubscriptionStatusEnum,
      description: 'Where the subscription stands.',
      resolve: (a) => a.subscriptionStatus,
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When the account was opened.', resolve: (a) => a.createdAt }),
    firstDownloadAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'When the account first downloaded a file of rows (a run’s, a dataset’s or a pipeline’s); null until then.',
      resolve: (a) => a.firstDownloadAt,
    }),
  }),
});

registerNode('acc', 'Account', {
  keepsPrefix: true,
  localId: /^acc_[A-Za-z0-9]{1,64}$/,
  load: async (ids, ctx) => {
    const own = ids.includes(ctx.principal.accountId) ? await getAccount(ctx.core.db, ctx.principal.accountId) : null;
    return ids.map((id) => (id === ctx.principal.accountId ? own : null));
  },
});

builder.queryField('viewer', (t) =>
  t.field({
    type: AccountRef,
    description: 'The calling account.',
    resolve: (_, __, ctx) => getAccount(ctx.core.db, ctx.principal.accountId),
  }),
);
