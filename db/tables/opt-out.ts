import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** What a person opts out by on the public page (src/privacy/opt-out.ts): email, or a phone with an SMS provider. */
export const OPT_OUT_CHANNELS = ['email', 'phone'] as const;
export type OptOutChannel = (typeof OPT_OUT_CHANNELS)[number];

/**
 * A confirmation link mailed by the public opt-out page, kept by the SHA-256 of its token. The address
 * it was mailed to is sealed under a key made from the token (AES-256-GCM), so the table alone reads
 * no one's address, and requests about people the service does not hold leave nothing readable behind;
 * it is cleared once the link is used. Rows go 30 days after they expire.
 */
export const optOutRequestTable = pgTable(
  'opt_out_request',
  {
    tokenHash: text('token_hash').primaryKey(),
    channel: text('channel', { enum: OPT_OUT_CHANNELS }).notNull(),
    /** The identifier, sealed under the link's token; null once the link is used. */
    sealedValue: text('sealed_value'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    /** The erasure's receipt (privacy_receipt's id), once confirmed. */
    receiptId: text('receipt_id'),
  },
  (t) => [index('opt_out_request_expires_idx').on(t.expiresAt)],
);
export type OptOutRequest = typeof optOutRequestTable.$inferSelect;
