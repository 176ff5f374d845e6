import { boolean, index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { accountTable, appUserTable } from './accounts.ts';

/**
 * OAuth 2.1 for hosted agents connecting to the MCP server (docs/api.md, "Connecting hosted agents (OAuth)").
 * A grant is what a user allowed one client (an agent's connector) in the console: the account it acts
 * on, the toolsets it may use; the console lists grants as the account's connected apps.
 */
export const oauthGrantTable = pgTable(
  'oauth_grant',
  {
    /** `oag_…`: also the grant id of every code and token issued under it. */
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    /** The user who consented: the grant acts with their current role and ends with their membership. */
    userId: text('user_id')
      .notNull()
      .references(() => appUserTable.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull(),
    /**
     * The client's name, shown at consent and in the list: as it registered itself (unverified), or as the
     * metadata document its client id names publishes it.
     */
    clientName: text('client_name').notNull(),
    /** The host of the redirect URI the user consented on (where the authorization code went). */
    redirectHost: text('redirect_host').notNull(),
    /** The toolsets chosen at consent (src/tools/toolsets.ts). */
    toolsets: text('toolsets').array().notNull(),
    /** Only the tools that change nothing. */
    readOnly: boolean('read_only').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** When one of its access tokens last authenticated a request, at most a minute stale. */
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    /** When it was revoked (in the console, or by the client revoking its refresh token); null while it works. */
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('oauth_grant_account_idx').on(t.accountId)],
);
export type OAuthGrant = typeof oauthGrantTable.$inferSelect;

/**
 * What the authorization server (oidc-provider) stores: clients, interactions, sessions, grants,
 * authorization codes, access and refresh tokens, one row each. Stored by the SHA-256 of the
 * artifact's id, never the id itself: an opaque token is its own id, so a copy of the table holds no
 * usable token.
 */
export const oauthArtifactTable = pgTable(
  'oauth_artifact',
  {
    /** oidc-provider's model name: `AccessToken`, `RefreshToken`, `AuthorizationCode`, `Client`, `Grant`, … */
    model: text('model').notNull(),
    idHash: text('id_hash').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    grantId: text('grant_id'),
    /** A session's or interaction's uid (oidc-provider's `findByUid`). */
    uid: text('uid'),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    /** When a code or refresh token was used (a second use revokes its grant). */
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.model, t.idHash] }),
    index('oauth_artifact_grant_idx').on(t.grantId),
    index('oauth_artifact_uid_idx').on(t.uid),
    index('oauth_artifact_expires_idx').on(t.expiresAt),
  ],
);
