import type { Plan, SubscriptionStatus } from '../../db/tables/accounts.ts';
import { AppError } from '../shared/errors.ts';

/** An account as billing sees it: its plan and subscription (an authenticated principal is one). */
export interface Subscriber {
  accountId: string;
  plan: Plan;
  subscriptionStatus: SubscriptionStatus;
}

export const PLAN_PRICE_USD: Record<Plan, number> = { starter: 49, growth: 149, scale: 649 };
const RANK: Record<Plan, number> = { starter: 0, growth: 1, scale: 2 };

/** A higher plan includes every gate of a lower one; no gate (`undefined`) is included in every plan. */
export function planIncludes(plan: Plan, required: Plan | undefined): boolean {
  return !required || RANK[plan] >= RANK[required];
}

/** 403 `plan_required` naming the plan needed, unless the principal's plan includes the gate (`planIncludes`). */
export function assertPlan(principal: Pick<Subscriber, 'plan'>, required: Plan | undefined, what: string): void {
  if (!required || planIncludes(principal.plan, required)) return;
  throw new AppError(
    403,
    'plan_required',
    `${what} needs the ${required} plan (${PLAN_PRICE_USD[required]} USD/month) or higher; ` +
      `this account is on ${principal.plan} (${PLAN_PRICE_USD[principal.plan]} USD/month).`,
  );
}

/**
 * Plan credits a paid month brings (`invoice.paid`): the plan's price, spent like the anchors'
 * prepaid platform usage. Purchased credits come on top and are spent first.
 */
export const PLAN_MONTHLY_CREDITS_USD: Record<Plan, number> = { ...PLAN_PRICE_USD };
