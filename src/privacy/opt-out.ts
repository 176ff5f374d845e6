/**
 * The public opt-out (docs/privacy.md#the-opt-out-page): a person asks, by email, to be removed from
 * the data and kept out; a mailed single-use link confirms it; the confirmation erases and suppresses
 * them (erasure.ts). Nothing before the link tells whether the person is in the data: every
 * well-formed address is answered the same, after the same work (two counters and one job added), and
 * the job mails every address the same link, held or not.
 *
 * Words: a *request* is an address asking; its *link* carries a random token, stored as its SHA-256
 * with the address sealed under a key made from the token, so only the mailbox's holder can read or
 * use it; *confirming* is the POST of the link's page (a GET never erases: mail scanners open links).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import { z } from 'zod';
import type { OptOutChannel } from '../../db/tables/opt-out.ts';
import { optOutRequestTable } from '../../db/tables/opt-out.ts';
import type { Core } from '../core.ts';
import { optOutMail } from '../accounts/mails.ts';
import { createRateLimiter, RateLimitedError, type RateLimiter } from '../accounts/rate-limit.ts';
import { hashToken, newToken, TOKEN_PATTERN } from '../accounts/tokens.ts';
import { normalizeEmail } from '../accounts/users.ts';
import { JOBS } from '../workers/jobs.ts';
import { recordAudit } from '../audit/audit.ts';
import { erasePerson, type PrivacyReceipt } from './erasure.ts';

/** A link works once, for a day. */
export const OPT_OUT_LINK_MS = 24 * 3600_000;
/** Rows stay this long past their expiry, so an old link is still told apart from a wrong one; then they go. */
const KEEP_AFTER_EXPIRY_MS = 30 * 24 * 3600_000;
/** Attempts of the job that mails a link (a mail server out of reach is retried with graphile-worker's backoff). */
const MAIL_ATTEMPTS = 5;
const HOUR_MS = 3600_000;

/** What the erasure records as the requester of an opt-out. */
export const OPT_OUT_REQUESTER = 'opt-out page';

/** The page that opens a link (it shows the address and a button; its POST confirms). */
export const optOutLinkUrl = (publicUrl: string, token: string) => `${publicUrl}/opt-out/confirm?token=${token}`;

/** How people may opt out here: by email always; by phone only with an SMS provider (none is built in). */
export function optOutChannels(config: Pick<Core['config'], 'optOut'>): OptOutChannel[] {
  return config.optOut.smsProvider ? ['email', 'phone'] : ['email'];
}

/** An address the page accepts: what sign-up accepts. */
export const optOutEmail = z.string().trim().min(1).max(254).email();

/** The page's limits, in the Postgres store every gateway process shares, with an hour's window. */
export interface OptOutThrottles {
  /** Requests per client address (OPT_OUT_REQUESTS_PER_HOUR). */
  byClient: RateLimiter;
  /** Links mailed per email address (OPT_OUT_MAILS_PER_HOUR). */
  byAddress: RateLimiter;
}

export function createOptOutThrottles(core: Pick<Core, 'sql' | 'config'>): OptOutThrottles {
  return {
    byClient: createRateLimiter(core.sql, core.config.optOut.requestsPerClient, Date.now, HOUR_MS),
    byAddress: createRateLimiter(core.sql, core.config.optOut.mailsPerAddress, Date.now, HOUR_MS),
  };
}

/** Asked, or limited for `retryAfterSecs`: a limit says nothing of whether the person is held. */
export type OptOutAsked = { asked: true } | { asked: false; retryAfterSecs: number };

/**
 * Asks for a confirmation link for `email` (already checked with `optOutEmail`) from `client` (a client
 * address as `clientAddress` gives it): counts the client, then the address (hashed: the counter table
 * holds no addresses), then adds the job that mails the link. Nothing is looked up: the same work for
 * every address.
 */
export async function requestOptOut(
  core: Pick<Core, 'sql'>,
  throttles: OptOutThrottles,
  email: string,
  client: string,
): Promise<OptOutAsked> {
  try {
    await throttles.byClient.consume(`optout-client:${client}`);
    await throttles.byAddress.consume(`optout-mail:${hashToken(normalizeEmail(email))}`);
  } catch (err) {
    if (err instanceof RateLimitedError) return { asked: false, retryAfterSecs: err.state.resetSecs };
    throw err;
  }
  await core.sql`select graphile_worker.add_job(${JOBS.sendOptOutLink}::text,
    json_build_object('email', ${normalizeEmail(email)}::text), max_attempts => ${MAIL_ATTEMPTS})`;
  return { asked: true };
}

/** The key that seals a request's address: made from its token, never stored. */
const sealingKey = (token: string) => createHash('sha256').update(`leadgate opt-out address\0${token}`).digest();

function seal(token: string, value: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(token), iv);
  const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

function unseal(token: string, sealed: string): string {
  const bytes = Buffer.from(sealed, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(token), bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}

/**
 * The job of `requestOptOut`: stores a new link for `email` and mails it, whoever the address belongs
 * to; rows long expired go on the way.
 */
export async function mailOptOutLink(core: Pick<Core, 'db' | 'config' | 'mailer' | 'clock'>, email: string) {
  const now = core.clock();
  const address = normalizeEmail(email);
  const { token, hash } = newToken();
  const expiresAt = new Date(now.getTime() + OPT_OUT_LINK_MS);
  await core.db
    .delete(optOutRequestTable)
    .where(lt(optOutRequestTable.expiresAt, new Date(now.getTime() - KEEP_AFTER_EXPIRY_MS)));
  await core.db
    .insert(optOutRequestTable)
    .values({ tokenHash: hash, channel: 'email', sealedValue: seal(token, address), createdAt: now, expiresAt });
  await core.mailer.send(optOutMail({ to: address, url: optOutLinkUrl(core.config.publicUrl, token), expiresAt }));
}

/** What a link is now: open (with the address it was mailed to), used, expired, or not one of ours. */
export type OptOutLink =
  | { state: 'open'; channel: OptOutChannel; value: string; expiresAt: Date }
  | { state: 'used'; usedAt: Date; receiptId: string | null }
  | { state: 'expired' }
  | { state: 'unknown' };

/** Reads a link without changing anything (the page a GET shows). */
export async function readOptOutLink(core: Pick<Core, 'db' | 'clock'>, token: string): Promise<OptOutLink> {
  if (!TOKEN_PATTERN.test(token)) return { state: 'unknown' };
  const [row] = await core.db
    .select()
    .from(optOutRequestTable)
    .where(eq(optOutRequestTable.tokenHash, hashToken(token)));
  if (!row) return { state: 'unknown' };
  if (row.usedAt) return { state: 'used', usedAt: row.usedAt, receiptId: row.receiptId };
  if (row.expiresAt <= core.clock() || !row.sealedValue) return { state: 'expired' };
  return { state: 'open', channel: row.channel, value: unseal(token, row.sealedValue), expiresAt: row.expiresAt };
}

/** A confirmation: done, with the erasure's receipt, or the link as it was when it could not be used. */
export type OptOutConfirmed =
  | { state: 'done'; channel: OptOutChannel; value: string; receipt: PrivacyReceipt }
  | Exclude<OptOutLink, { state: 'open' }>;

/** Who confirmed, as the audit log shows it: the holder of the mailed link. */
const LINK_HOLDER = { type: 'link' as const, id: null, label: 'Opt-out page' };

/**
 * Confirms a link, in one transaction: takes it (once, within its day: of two presses one erases, the
 * other finds it used), erases the person it names and suppresses them for good (erasure.ts, source
 * `opt_out`, which no account can remove), records `privacy.opt_out` (the identifier as its keyed
 * hash), and keeps the receipt in place of the address. A failure leaves the link as it was.
 */
export async function confirmOptOut(core: Pick<Core, 'db' | 'clock'>, token: string): Promise<OptOutConfirmed> {
  if (!TOKEN_PATTERN.test(token)) return { state: 'unknown' };
  const tokenHash = hashToken(token);
  const now = core.clock();
  const done = await core.db.transaction(async (tx) => {
    const [taken] = await tx
      .update(optOutRequestTable)
      .set({ usedAt: now })
      .where(
        and(
          eq(optOutRequestTable.tokenHash, tokenHash),
          isNull(optOutRequestTable.usedAt),
          gt(optOutRequestTable.expiresAt, now),
        ),
      )
      .returning();
    if (!taken) return undefined;
    if (!taken.sealedValue) throw new Error('opt-out link without its address: not taken');
    const value = unseal(token, taken.sealedValue);
    const receipt = await erasePerson(tx, {
      identifiers: [{ kind: taken.channel, value }],
      source: 'opt_out',
      requestedBy: OPT_OUT_REQUESTER,
    });
    const { counts } = receipt;
    const erased = counts.people + counts.propertyOwners + counts.rentalHosts + counts.runRows;
    for (const identifier of receipt.identifiers)
      await recordAudit(tx, {
        accountId: null,
        actor: LINK_HOLDER,
        action: 'privacy.opt_out',
        target: { type: 'privacy_request', id: receipt.id },
        details: { kind: identifier.kind, personHash: identifier.hash, erased },
      });
    await tx
      .update(optOutRequestTable)
      .set({ receiptId: receipt.id, sealedValue: null })
      .where(eq(optOutRequestTable.tokenHash, tokenHash));
    return { state: 'done' as const, channel: taken.channel, value, receipt };
  });
  if (done) return done;
  const link = await readOptOutLink(core, token);
  return link.state === 'open' ? { state: 'expired' } : link;
}
