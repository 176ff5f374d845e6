import { createHash } from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.ts';
import {
  accountTable,
  apiKeyTable,
  type Account,
  type Plan,
  type SubscriptionStatus,
} from '../../db/schema/accounts.ts';
import { AppError, notFound, unauthenticated } from '../shared/errors.ts';
import { newAccountId, newKeyId, randomBase62 } from '../shared/ids.ts';
import { grantPlanCredits } from '../billing/wallet.ts';

/** Who is calling: resolved from the Bearer key on every request and socket. */
export interface Principal {
  accountId: string;
  keyId: string;
  keyPrefix: string;
  plan: Plan;
  subscriptionStatus: SubscriptionStatus;
}

const KEY_PATTERN = /^lg_live_[A-Za-z0-9]{32}$/;
const PREFIX_LENGTH = 14;

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

export function generateKey() {
  const key = `lg_live_${randomBase62(32)}`;
  return { key, prefix: key.slice(0, PREFIX_LENGTH), hash: hashKey(key) };
}

export async function createApiKey(db: Executor, accountId: string) {
  const [account] = await db.select({ id: accountTable.id }).from(accountTable).where(eq(accountTable.id, accountId));
  if (!account) throw notFound('Account');
  const { key, prefix, hash } = generateKey();
  const id = newKeyId();
  await db.insert(apiKeyTable).values({ id, accountId, prefix, hash });
  return { keyId: id, apiKey: key, prefix };
}

export async function revokeApiKey(db: Executor, prefix: string): Promise<void> {
  const rows = await db
    .update(apiKeyTable)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeyTable.prefix, prefix), isNull(apiKeyTable.revokedAt)))
    .returning({ id: apiKeyTable.id });
  if (rows.length === 0) throw new AppError(404, 'not_found', `No active key with prefix ${prefix}`);
}

export interface CreateAccountInput {
  name: string;
  plan?: Plan;
  subscriptionStatus?: SubscriptionStatus;
  /** Plan credits to grant at creation, in micro-dollars. */
  creditsMicros?: bigint;
}

/** Creates an account, its wallet and a first API key, in one transaction. */
export async function createAccount(db: Database, input: CreateAccountInput) {
  return db.transaction(async (tx) => {
    const id = newAccountId();
    const [account] = await tx
      .insert(accountTable)
      .values({ id, name: input.name, plan: input.plan, subscriptionStatus: input.subscriptionStatus })
      .returning();
    await grantPlanCredits(tx, id, input.creditsMicros ?? 0n, 'initial plan credits');
    const key = await createApiKey(tx, id);
    return { account: account!, apiKey: key.apiKey, keyPrefix: key.prefix };
  });
}

export async function getAccount(db: Executor, accountId: string): Promise<Account> {
  const [account] = await db.select().from(accountTable).where(eq(accountTable.id, accountId));
  if (!account) throw notFound('Account');
  return account;
}

/** Reads "Bearer <key>" (or a bare key, as graphql-ws connection params often carry it). */
export function parseBearer(header: string | undefined | null): string {
  if (!header) throw unauthenticated();
  const match = /^(?:Bearer\s+)?(\S+)$/i.exec(header.trim());
  if (!match || !KEY_PATTERN.test(match[1]!)) throw unauthenticated('Malformed API key: send "Authorization: Bearer <API_KEY>"');
  return match[1]!;
}

export interface Authenticator {
  authenticate(header: string | undefined | null): Promise<Principal>;
  /** Forget cached keys (after a revocation in this process). */
  clear(): void;
}

/**
 * Resolves keys by hash. A resolved key is cached for `cacheSecs` in this process, so a key revoked
 * elsewhere stops working within that many seconds; unknown keys are never cached.
 */
export function createAuthenticator(db: Executor, cacheSecs: number): Authenticator {
  const cache = new Map<string, { principal: Principal; expires: number }>();
  return {
    async authenticate(header) {
      const hash = hashKey(parseBearer(header));
      const hit = cache.get(hash);
      if (hit && hit.expires > Date.now()) return hit.principal;
      const [row] = await db
        .select({
          keyId: apiKeyTable.id,
          keyPrefix: apiKeyTable.prefix,
          accountId: accountTable.id,
          plan: accountTable.plan,
          subscriptionStatus: accountTable.subscriptionStatus,
        })
        .from(apiKeyTable)
        .innerJoin(accountTable, eq(accountTable.id, apiKeyTable.accountId))
        .where(and(eq(apiKeyTable.hash, hash), isNull(apiKeyTable.revokedAt)));
      if (!row) {
        cache.delete(hash);
        throw unauthenticated('Unknown or revoked API key');
      }
      if (cacheSecs > 0) {
        if (cache.size > 10_000) cache.clear();
        cache.set(hash, { principal: row, expires: Date.now() + cacheSecs * 1000 });
      }
      return row;
    },
    clear: () => cache.clear(),
  };
}

/** Changes an account's plan and, optionally, its subscription status. */
export async function setPlan(db: Executor, accountId: string, plan: Plan, status?: SubscriptionStatus): Promise<Account> {
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
