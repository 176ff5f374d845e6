import type { Plan, SubscriptionStatus } from '../../db/tables/accounts.ts';
import type { Role } from '../../db/tables/identity.ts';

/**
 * Who is calling: resolved on every request and socket from a Bearer API key, or (GraphQL only) from
 * a console session cookie with its CSRF token.
 */
export interface Principal {
  accountId: string;
  /** The credential the per-minute budget is counted on: the key's id, or the session's for a session. */
  keyId: string;
  /** The key's display prefix; empty for a session. */
  keyPrefix: string;
  plan: Plan;
  subscriptionStatus: SubscriptionStatus;
  /** The signed-in user (sessions only). */
  userId?: string;
  /** The user's role in the account (sessions only; a key has none: see roles.ts). */
  role?: Role;
  /**
   * Keys created in the console only: their creator's role in the account, read when the key is
   * authenticated. The key acts with at most that role's rights (roles.ts). Undefined for sessions and
   * for the operator's keys (CLI, demo), which keep every key right.
   */
  keyRole?: Role;
  /** The console session (sessions only). */
  sessionId?: string;
}
