import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  customType,
  index,
  pgEnum,
  pgTable,
  smallint,
  text,
  timestamp,
  unique,
} from 'drizzle-orm/pg-core';
import { accountTable, appUserTable } from './accounts.ts';

/**
 * Who signs in to the console and how: users (accounts.ts) are members of accounts with a role;
 * console sessions, invitations, password resets and email verifications are stored by the SHA-256 of
 * their token only, so a copy of the database signs no one in.
 */

export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];
export const roleEnum = pgEnum('role', ROLES);

export const membershipTable = pgTable(
  'membership',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => appUserTable.id, { onDelete: 'cascade' }),
    role: roleEnum('role').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [unique('membership_account_user_key').on(t.accountId, t.userId), index('membership_user_idx').on(t.userId)],
);
export type Membership = typeof membershipTable.$inferSelect;

/** A signed-in browser: the cookie holds the token, this row its hash; one account per session. */
export const consoleSessionTable = pgTable(
  'console_session',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    userId: text('user_id')
      .notNull()
      .references(() => appUserTable.id, { onDelete: 'cascade' }),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    /** Sent back in X-CSRF-Token (or graphql-ws connectionParams.csrfToken) with every cookie-authenticated request. */
    csrfToken: text('csrf_token').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
    /** Idle expiry, moved forward as the session is used, never past created_at + the longest life. */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    userAgent: text('user_agent'),
    ip: text('ip'),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('console_session_user_idx').on(t.userId)],
);
export type ConsoleSession = typeof consoleSessionTable.$inferSelect;

export const invitationTable = pgTable(
  'invitation',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    /** Case-folded like app_user.email. */
    email: text('email').notNull(),
    role: roleEnum('role').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    invitedBy: text('invited_by').references(() => appUserTable.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('invitation_account_idx').on(t.accountId)],
);
export type Invitation = typeof invitationTable.$inferSelect;

export const passwordResetTable = pgTable(
  'password_reset',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => appUserTable.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [index('password_reset_user_idx').on(t.userId)],
);

/** A link mailed at sign-up (or sent again) that verifies the user's email; it works until it expires. */
export const emailVerificationTable = pgTable(
  'email_verification',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => appUserTable.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('email_verification_user_idx').on(t.userId)],
);

/**
 * One sign-up trial per mailbox: the SHA-256 of the canonical mailbox (src/accounts/mailbox.ts) of each
 * verified email whose account received the trial credits. Kept when the account or user is deleted,
 * so deleting them does not free the mailbox for another trial.
 */
export const trialClaimTable = pgTable('trial_claim', {
  mailboxHash: text('mailbox_hash').primaryKey(),
  accountId: text('account_id').references(() => accountTable.id, { onDelete: 'set null' }),
  userId: text('user_id').references(() => appUserTable.id, { onDelete: 'set null' }),
  /** The plan credits granted, micro-dollars. */
  creditsMicros: bigint('credits_micros', { mode: 'bigint' }).notNull(),
  claimedAt: timestamp('claimed_at', { withTimezone: true }).notNull().defaultNow(),
});
export type TrialClaim = typeof trialClaimTable.$inferSelect;

const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' });

/** One row: the installation's random secret, made on first use (signed links). */
export const installationSecretTable = pgTable(
  'installation_secret',
  {
    id: smallint('id').primaryKey().default(1),
    secret: bytea('secret').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check('installation_secret_one_row', sql`${t.id} = 1`)],
);
