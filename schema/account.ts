import { PLANS, SUBSCRIPTION_STATUSES, type Account } from '../db/schema/accounts.ts';
import { getAccount } from '../src/accounts/accounts.ts';
import { PLAN_PRICE_USD } from '../src/billing/plans.ts';
import { builder } from './builder.ts';

const PlanEnum = builder.enumType('Plan', {
  description: `${PLANS.map((plan) => `${plan} (${PLAN_PRICE_USD[plan]} USD/month)`).join(', ')}; a higher plan includes every gate of a lower one.`,
  values: PLANS,
});
const SubscriptionStatusEnum = builder.enumType('SubscriptionStatus', { values: SUBSCRIPTION_STATUSES });

export const AccountRef = builder.objectRef<Account>('Account');

AccountRef.implement({
  description: 'The account the API key belongs to.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    plan: t.field({ type: PlanEnum, resolve: (a) => a.plan }),
    subscriptionStatus: t.field({ type: SubscriptionStatusEnum, resolve: (a) => a.subscriptionStatus }),
    createdAt: t.field({ type: 'DateTime', resolve: (a) => a.createdAt }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: AccountRef,
    description: 'The calling account.',
    resolve: (_, __, ctx) => getAccount(ctx.core.db, ctx.principal.accountId),
  }),
);
