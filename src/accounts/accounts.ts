import { createHash } from 'node:crypto';
import { and, eq, gt, isNotNull, isNull, or, sql } from 'drizzle-orm';
import { type Database, type Executor, runInTransaction } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import {
  accountTable,
  apiKeyTable,
  type Account,
  type Plan,
  type SubscriptionStatus,
} from '../../db/tables/accounts.ts';
import { membershipTable } from '../../db/tables/identity.ts';
import { AppError, notFound, unauthenticated } from '../shared/errors.ts';
import { newAccountId, newKeyId, randomBase62 } from '../shared/ids.ts';
import { grantPlanCredits } from '../billing/wallet.ts';
import { OPERATOR, recordAudit } from '../audit/audit.ts';
import type { Logger } from '../logger.ts';
import type { Principal } from './principal.ts';
import { ACCESS_TOKEN_PATTERN, oauthPrincipal, touchGrant } from './oauth/principal.ts';
import { findActiveSession, SESSION_TOUCH_MS, touchSession } from './sessions.ts';
import { hashToken, sameSecret, TOKEN_PATTERN } from './tokens.ts';

export type { Principal } from './principal.ts';

const KEY_PATTERN = /^lg_live_[A-Za-z0-9]{32}$/;
const PREFIX_LENGTH = 14;

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

export function generateKey() {
  const key = `lg_live_${randomBase62(32)}`;
  return { key, prefix: key.slice(0, PREFIX_LENGTH), hash: hashKey(key) };
}

export interface NewKeyOptions {
  /** What the account calls the key. Default "API key". */
  name?: string;
  /** After this the key is refused like a revoked one. Default never. */
  expiresAt?: Date | null;
  /** The console user creating it. */
  createdBy?: string | null;
}

export async function createApiKey(db: Executor, accountId: string, options: NewKeyOptions = {}) {
  const [account] = await db.select({ id: accountTable.id }).from(accountTable).where(eq(accountTable.id, accountId));
  if (!account) throw notFound('Account');
  const { key, prefix, hash } = generateKey();
  const id = newKeyId();
  const rows = await db
    .insert(apiKeyTable)
    .values({
      id,
      accountId,
      prefix,
      hash,
      name: options.name,
      expiresAt: options.expiresAt ?? null,
      createdBy: options.createdBy ?? null,
    })
    .returning();
  return { keyId: id, apiKey: key, prefix, key: oneRow(rows, 'insert into api_key') };
}

/** The audit log's name for a key: its name and display prefix (never the secret). */
export const keyLabel = (key: { name: string; prefix: string }) => `${key.name} (${key.prefix}…)`;

/**
 * The operator's key for an account (the command line's `keys create`): it has no creator, and its
 * creation is recorded in the account's audit log with the operator as actor, in the same transaction.
 */
export async function createOperatorKey(db: Executor, accountId: string) {
  return runInTransaction(db, async (tx) => {
    const made = await createApiKey(tx, accountId);
    await recordAudit(tx, {
      accountId,
      actor: OPERATOR,
      action: 'api_key.created',
      target: { type: 'api_key', id: made.keyId, label: keyLabel(made.key) },
      details: { name: made.key.name, expiresAt: null },
    });
    return made;
  });
}

/** Revokes a key by its display prefix (the operator, on the command line), recorded in its account's audit log. */
export async function revokeApiKey(db: Executor, prefix: string): Promise<void> {
  await runInTransaction(db, async (tx) => {
    const [key] = await tx
      .update(apiKeyTable)
      .set({ revokedAt: new Date(), revokedReason: 'revoked' })
      .where(and(eq(apiKeyTable.prefix, prefix), isNull(apiKeyTable.revokedAt)))
      .returning();
    if (!key) throw new AppError(404, 'not_found', `No active key with prefix ${prefix}`);
    await recordAudit(tx, {
      accountId: key.accountId,
      actor: OPERATOR,
      action: 'api_key.revoked',
      target: { type: 'api_key', id: key.id, label: keyLabel(key) },
      details: { name: key.name },
    });
  });
}

export interface CreateAccountInput {
  name: string;
  plan?: Plan;
  subscriptionStatus?: SubscriptionStatus;
  /** Plan credits to grant at creation, in micro-dollars. */
  creditsMicros?: bigint;
}

/** Inserts an account and its wallet (with its first plan credits) in the caller's transaction. */
export async function openAccount(tx: Executor, input: CreateAccountInput): Promise<Account> {
  const id = newAccountId();
  const account = oneRow(
    await tx
      .insert(accountTable)
      .values({ id, name: input.name, plan: input.plan, subscriptionStatus: input.subscriptionStatus })
      .returning(),
    'insert into account',
  );
  await grantPlanCredits(tx, id, input.creditsMicros ?? 0n, 'initial plan credits');
  return account;
}

/** Creates an account, its wallet and a first API key, in one transaction. */
export async function createAccount(db: Database, input: CreateAccountInput) {
  return db.transaction(async (tx) => {
    const account = await openAccount(tx, input);
    const key = await createApiKey(tx, account.id);
    return { account, apiKey: key.apiKey, keyPrefix: key.prefix };
  });
}

export async function getAccount(db: Executor, accountId: string): Promise<Account> {
  const [account] = await db.select().from(accountTable).where(eq(accountTable.id, accountId));
  if (!account) throw notFound('Account');
  return account;
}

const malformedKey = () => unauthenticated('Malformed API key: send "Authorization: Bearer <API_KEY>"');

/** Reads "Bearer <key>" (or a bare key, as graphql-ws connection params often carry it). */
export function parseBearer(header: string | undefined | null): string {
  const key = bearerToken(header);
  if (!KEY_PATTERN.test(key)) throw malformedKey();
  return key;
}

/** The token of "Bearer <token>" (or a bare token), whatever it is. */
function bearerToken(header: string | undefined | null): string {
  if (!header) throw unauthenticated();
  const token = /^(?:Bearer\s+)?(\S+)$/i.exec(header.trim())?.[1];
  if (!token) throw malformedKey();
  return token;
}

/**
 * The credential of a Bearer header as the cache knows it: an API key, or (where OAuth tokens are taken:
 * `resource` given) an OAuth access token; a malformed one throws 401.
 */
function credentialOf(header: string | undefined | null, resource: string | undefined) {
  const token = bearerToken(header);
  if (KEY_PATTERN.test(token)) return { kind: 'key' as const, hash: hashKey(token) };
  if (resource !== undefined && ACCESS_TOKEN_PATTERN.test(token))
    return { kind: 'oauth' as const, hash: hashToken(token) };
  throw malformedKey();
}

export interface AuthenticateOptions {
  /** Looked up now, whatever the cache holds (the cache takes the answer). */
  fresh?: boolean;
  /**
   * The canonical URI of the resource asked for, where OAuth access tokens are taken (the MCP server:
   * `${PUBLIC_URL}/mcp`): a token is accepted only when issued for it (its audience). Without it (REST,
   * GraphQL) only API keys are, and an access token is refused as a malformed key.
   */
  resource?: string;
}

export interface Authenticator {
  /** The caller of a Bearer API key, or with `resource` of an OAuth access token for it. */
  authenticate(header: string | undefined | null, options?: AuthenticateOptions): Promise<Principal>;
  /**
   * The caller of a console session cookie's token, whose requests must carry the session's CSRF
   * token (`csrfToken`): 401 `unauthenticated` for an unknown, expired or revoked session, 403
   * `csrf_failed` for a missing or wrong CSRF token.
   */
  authenticateSession(
    token: string,
    csrfToken: string | undefined | null,
    options?: { fresh?: boolean },
  ): Promise<Principal>;
  /** Forget cached keys and sessions (after a revocation in this process). */
  clear(): void;
  /**
   * Whether the key (or access token for `resource`) of `header`, or without one the console session of
   * `sessionToken`, is answered from this process's cache (resolved within AUTH_CACHE_SECS), without a lookup.
   */
  isCached(header: string | undefined | null, sessionToken?: string, resource?: string): boolean;
}

export const csrfFailed = () =>
  new AppError(
    403,
    'csrf_failed',
    'Requests signed in with the console session cookie must send its ' +
      'CSRF token in the X-CSRF-Token header (csrfToken of /auth/session)',
  );

/**
 * Resolves keys by hash, and console sessions by their token's hash. A resolved key or session is
 * cached for `cacheSecs` in this process (never past its expiry), so one revoked elsewhere stops
 * working within that many seconds; unknown ones are never cached. On a cache miss the key's
 * last_used_at, or the session's last use, is written in the background, at most once a minute.
 */
export function createAuthenticator(
  db: Executor,
  cacheSecs: number,
  logger?: Logger,
  clock: () => Date = () => new Date(),
): Authenticator {
  /** `resource`: an access token's, which a hit must ask for again. */
  type Entry = { principal: Principal; expires: number; csrfToken?: string; resource?: string };
  const cache = new Map<string, Entry>();
  const touched = new Map<string, number>();
  const remember = (hash: string, entry: Entry) => {
    if (cacheSecs <= 0) return;
    if (cache.size > 10_000) cache.clear();
    cache.set(hash, entry);
  };
  /**
   * Runs a bookkeeping write at most once a minute (SESSION_TOUCH_MS) per
   * key or session, without waiting for it; a failure is logged only.
   */
  const touch = (id: string, at: number, write: () => Promise<unknown>) => {
    if ((touched.get(id) ?? 0) > at - SESSION_TOUCH_MS) return;
    if (touched.size > 50_000) touched.clear();
    touched.set(id, at);
    write().catch((err) => logger?.warn({ err, id }, 'could not record the last use of a key or session'));
  };
  return {
    async authenticate(header, options) {
      const { kind, hash } = credentialOf(header, options?.resource);
      const hit = cache.get(hash);
      const at = Date.now();
      if (hit && hit.expires > at && !options?.fresh && (hit.resource ?? options?.resource) === options?.resource)
        return hit.principal;
      const now = clock();
      if (kind === 'oauth') {
        const resource = options?.resource ?? '';
        const found = await oauthPrincipal(db, hash, resource, now);
        if (!found) {
          cache.delete(hash);
          throw unauthenticated('Unknown, expired or revoked access token');
        }
        const { principal } = found;
        remember(hash, { principal, resource, expires: Math.min(at + cacheSecs * 1000, found.expiresAt.getTime()) });
        touch(principal.keyId, at, () => touchGrant(db, principal.keyId));
        return principal;
      }
      const [row] = await db
        .select({
          keyId: apiKeyTable.id,
          keyPrefix: apiKeyTable.prefix,
          accountId: accountTable.id,
          plan: accountTable.plan,
          subscriptionStatus: accountTable.subscriptionStatus,
          expiresAt: apiKeyTable.expiresAt,
          keyRole: membershipTable.role,
        })
        .from(apiKeyTable)
        .innerJoin(accountTable, eq(accountTable.id, apiKeyTable.accountId))
        // A console key acts with its creator's current role (roles.ts) and stops with their membership.
        .leftJoin(
          membershipTable,
          and(eq(membershipTable.accountId, apiKeyTable.accountId), eq(membershipTable.userId, apiKeyTable.createdBy)),
        )
        .where(
          and(
            eq(apiKeyTable.hash, hash),
            isNull(apiKeyTable.revokedAt),
            or(isNull(apiKeyTable.expiresAt), gt(apiKeyTable.expiresAt, now)),
            or(isNull(apiKeyTable.createdBy), isNotNull(membershipTable.id)),
          ),
        );
      if (!row) {
        cache.delete(hash);
        // An expired key, or one whose creator left, is refused as a revoked one.
        throw unauthenticated('Unknown or revoked API key');
      }
      const { expiresAt, keyRole, ...key } = row;
      const principal: Principal = keyRole ? { ...key, keyRole } : key;
      remember(hash, { principal, expires: Math.min(at + cacheSecs * 1000, expiresAt?.getTime() ?? Infinity) });
      touch(row.keyId, at, () =>
        db
          .update(apiKeyTable)
          .set({ lastUsedAt: sql`now()` })
          .where(
            and(
              eq(apiKeyTable.id, row.keyId),
              or(isNull(apiKeyTable.lastUsedAt), sql`${apiKeyTable.lastUsedAt} < now() - interval '1 minute'`),
            ),
          ),
      );
      return principal;
    },
    async authenticateSession(token, csrfToken, options) {
      if (!TOKEN_PATTERN.test(token)) throw unauthenticated('Your console session has ended: sign in again');
      const hash = hashToken(token);
      const at = Date.now();
      let entry = cache.get(hash);
      if (!entry || entry.expires <= at || options?.fresh) {
        const session = await findActiveSession(db, hash, clock());
        if (!session) {
          cache.delete(hash);
          throw unauthenticated('Your console session has ended: sign in again');
        }
        entry = {
          principal: {
            accountId: session.accountId,
            keyId: session.id,
            keyPrefix: '',
            plan: session.plan,
            subscriptionStatus: session.subscriptionStatus,
            userId: session.userId,
            role: session.role,
            sessionId: session.id,
          },
          csrfToken: session.csrfToken,
          expires: Math.min(at + cacheSecs * 1000, session.expiresAt.getTime()),
        };
        remember(hash, entry);
        if (session.lastSeenAt.getTime() < at - SESSION_TOUCH_MS)
          touch(session.id, at, () => touchSession(db, session.id, clock()));
      }
      if (entry.csrfToken === undefined || !sameSecret(csrfToken, entry.csrfToken)) throw csrfFailed();
      return entry.principal;
    },
    clear: () => cache.clear(),
    isCached(header, sessionToken, resource) {
      let hash: string | undefined;
      try {
        hash = header
          ? credentialOf(header, resource).hash
          : sessionToken && TOKEN_PATTERN.test(sessionToken)
            ? hashToken(sessionToken)
            : undefined;
      } catch {
        return false; // a malformed key is never cached
      }
      const hit = hash === undefined ? undefined : cache.get(hash);
      return hit !== undefined && hit.expires > Date.now() && (hit.resource ?? resource) === resource;
    },
  };
}

/** Changes an account's plan and, optionally, its subscription status. */
export async function setPlan(
  db: Executor,
  accountId: string,
  plan: Plan,
  status?: SubscriptionStatus,
): Promise<Account> {
  const [account] = await db
    .update(accountTable)
    .set({ plan, ...(status ? { subscriptionStatus: status } : {}) })
    .where(eq(accountTable.id, accountId))
    .returning();
  if (!account) throw notFound('Account');
  return account;
}

/** Serialises changes to one account's state (ends and cancels of its runs, its webhooks). */
export async function lockAccount(tx: Executor, accountId: string) {
  await tx.execute(sql`select 1 from account where id = ${accountId} for update`);
}
