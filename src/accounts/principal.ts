import type { Plan, SubscriptionStatus } from '../../db/tables/accounts.ts';
import type { Role } from '../../db/tables/identity.ts';
import type { Toolset } from '../tools/toolsets.ts';

/**
 * Who is calling: resolved on every request and socket from a Bearer API key, or (GraphQL only) from
 * a console session cookie with its CSRF token, or (MCP only) from an OAuth access token.
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
  /**
   * OAuth access tokens only (the MCP server, docs/api.md): the grant the user consented to (`keyId` is
   * its id, `keyRole` the user's current role), its client, and the toolsets and read-only mode chosen
   * then, which the MCP server's tool list follows.
   */
  oauth?: { grantId: string; clientId: string; toolsets: Toolset[]; readOnly: boolean };
  /**
   * Where this request came from, for the audit log: the client's address (as failed authentications
   * count it) and its User-Agent. Set per request by the faces; absent for work no request made.
   */
  client?: { ip: string | null; userAgent: string | null };
}
