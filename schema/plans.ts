import { PLANS, type Plan } from '../db/tables/accounts.ts';
import { PLAN_MONTHLY_CREDITS_USD, PLAN_PRICE_USD } from '../src/billing/plans.ts';
import { usdToMicros } from '../src/billing/money.ts';
import { PURCHASE_BONUS_PERCENT } from '../src/billing/wallet.ts';
import { ENDPOINTS } from '../src/endpoints/index.ts';
import { TOOLS } from '../src/tools/index.ts';
import { PlanEnum } from './account.ts';
import { builder } from './builder.ts';

/** The plans as a customer chooses between them: every figure read from the declarations that enforce it. */

/**
 * What a plan adds over the one below: the tools and APIs whose lowest plan it is (the first plan: the
 * ungated tools too).
 */
function addedBy(plan: Plan): string[] {
  const tools = TOOLS.filter((tool) => !tool.linkedOnly && (tool.plan ?? PLANS[0]) === plan).map((t) => t.title);
  const apis = ENDPOINTS.filter((endpoint) => endpoint.plan === plan).map((e) => e.title);
  return [...tools, ...apis];
}

const PlanOfferRef = builder.objectRef<Plan>('PlanOffer').implement({
  description: 'A plan as offered: its price, what a paid month brings, and the tools and APIs it opens.',
  fields: (t) => ({
    plan: t.field({ type: PlanEnum, description: 'The plan.', resolve: (plan) => plan }),
    price: t.field({
      type: 'Money',
      description: 'Its price, USD a month.',
      resolve: (p) => usdToMicros(PLAN_PRICE_USD[p]),
    }),
    monthlyCredits: t.field({
      type: 'Money',
      description: 'Plan credits each paid month adds to the wallet.',
      resolve: (plan) => usdToMicros(PLAN_MONTHLY_CREDITS_USD[plan]),
    }),
    creditBonusPercent: t.int({
      description: 'The bonus on purchased credits (`buyCredits`), percent.',
      resolve: (plan) => PURCHASE_BONUS_PERCENT[plan],
    }),
    includedPlan: t.field({
      type: PlanEnum,
      nullable: true,
      description: 'The plan below, all of whose tools and APIs this one includes; null for the first.',
      resolve: (plan) => PLANS[PLANS.indexOf(plan) - 1] ?? null,
    }),
    adds: t.stringList({
      description: 'The tools and APIs (their titles) whose lowest plan this is.',
      resolve: (plan) => addedBy(plan),
    }),
    current: t.boolean({
      description: 'The caller’s account is on this plan (whatever its subscription status).',
      resolve: (plan, _, ctx) => ctx.principal.plan === plan,
    }),
    choosable: t.boolean({
      description:
        'choosePlan can take it on this server: with Stripe, when the plan has a price there ' +
        '(STRIPE_PRICE_<PLAN>); in demo mode always; without payments never.',
      resolve: (plan, _, ctx) => {
        const payments = ctx.core.config.payments;
        return payments.mode === 'demo' || (payments.mode === 'stripe' && Boolean(payments.prices[plan]));
      },
    }),
  }),
});

builder.queryField('plans', (t) =>
  t.field({
    type: [PlanOfferRef],
    description: 'The plans, lowest first, as `choosePlan` sells them (docs/payments.md).',
    resolve: () => [...PLANS],
  }),
);
