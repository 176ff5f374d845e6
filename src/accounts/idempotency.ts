import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Database, Transaction } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import type { AccountWrites } from './writes.ts';
import type { Principal } from './principal.ts';
import { AppError, ValidationError } from '../shared/errors.ts';

export interface StoredResponse {
  status: number;
  body: unknown;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Text of `canonical`'s output waiting on its stack. */
class Written {
  constructor(readonly text: string) {}
}

/**
 * Stable JSON: object keys sorted, so the same request hashes the same. Walks with a stack of its
 * own, not by recursion: a body nested thousands of levels deep must not overflow the call stack.
 */
function canonical(value: unknown): string {
  let out = '';
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next instanceof Written) {
      out += next.text;
    } else if (Array.isArray(next)) {
      stack.push(new Written(']'));
      for (let i = next.length - 1; i >= 0; i--) stack.push(next[i], new Written(i > 0 ? ',' : ''));
      stack.push(new Written('['));
    } else if (next && typeof next === 'object') {
      const keys = Object.keys(next).sort();
      stack.push(new Written('}'));
      for (const [i, key] of [...keys.entries()].reverse())
        stack.push((next as Record<string, unknown>)[key], new Written(`${i > 0 ? ',' : ''}${JSON.stringify(key)}:`));
      stack.push(new Written('{'));
    } else {
      out += JSON.stringify(next ?? null);
    }
  }
  return out;
}

/**
 * Runs a request's write once per (account, key) for 24 hours. `prepare` checks the request without
 * the database, throwing its refusal, and returns the write. The key row and everything the write
 * does commit together, so a crash leaves neither; a concurrent request with the same key waits for
 * the first and then replays its response. The same key with another request answers 422.
 *
 * Without a key, `prepare` runs before the write is queued, so a refused request never joins a group
 * of the account's writes (writes.ts). With a key, it runs after the key is claimed, so a
 * replay answers what the first request got even if the account has changed since (its plan, say).
 */
export async function withIdempotency(
  writes: AccountWrites,
  accountId: string,
  key: string | undefined | null,
  scope: string,
  request: unknown,
  prepare: () => (tx: Transaction) => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  if (key === undefined || key === null) return { ...(await writes.run(accountId, prepare())), replayed: false };
  if (!KEY_PATTERN.test(key))
    throw new ValidationError([{ path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
  const hash = createHash('sha256')
    .update(`${scope}\n${canonical(request)}`)
    .digest('hex');
  // Never grouped with other writes: two requests with one key in one group would see each other's
  // claim before its response is stored.
  return writes.run(
    accountId,
    async (tx) => {
      const claimed = (await tx.execute(sql`
      insert into idempotency_key as k (account_id, key, request_hash, response_status, response_body)
      values (${accountId}, ${key}, ${hash}, 0, 'null')
      on conflict (account_id, key) do update set request_hash = excluded.request_hash, response_status = 0,
        response_body = 'null', created_at = now() where k.created_at < now() - interval '24 hours'
      returning 1`)) as unknown as unknown[];
      if (claimed.length === 0) {
        const stored = oneRow(
          (await tx.execute(
            sql`select request_hash, response_status, response_body from idempotency_key
              where account_id = ${accountId} and key = ${key}`,
          )) as unknown as { request_hash: string; response_status: number; response_body: unknown }[],
          'the idempotency key held by another request',
        );
        if (stored.request_hash !== hash) {
          throw new AppError(
            422,
            'idempotency_key_reused',
            'This Idempotency-Key was already used with a different request; send a new key for a new request.',
          );
        }
        return { status: stored.response_status, body: stored.response_body, replayed: true };
      }
      const response = await prepare()(tx);
      await tx.execute(
        sql`update idempotency_key set response_status = ${response.status},
          response_body = ${JSON.stringify(response.body)}::jsonb where account_id = ${accountId} and key = ${key}`,
      );
      return { ...response, replayed: false };
    },
    { alone: true },
  );
}

/** Whose write it is and how it is told apart from others: see idempotentWrite. */
export interface IdempotentCall {
  principal: Pick<Principal, 'accountId'>;
  /**
   * The caller's idempotency key (REST `Idempotency-Key`, GraphQL `idempotencyKey`); none runs the write every time.
   */
  key?: string | null;
  /** Names the operation, so one key sent to two operations is two requests. */
  scope: string;
  /** What the caller sent, hashed with the key: the same key with another request answers 422. */
  request?: unknown;
}

/**
 * The one wrapper every face takes for an account's write (a run start, a credit purchase): the write
 * runs in the account's write groups (writes.ts), once per idempotency key when the caller sent one.
 * `prepare` checks the request and returns the write; `answer` makes the face's answer of its result,
 * which is stored as it is for replays (so a replay answers exactly what the first request got).
 */
export async function idempotentWrite<W, A = W>(
  core: { accountWrites: AccountWrites },
  call: IdempotentCall,
  prepare: () => (tx: Transaction) => Promise<W>,
  answer: (written: W) => A = (written) => written as unknown as A,
): Promise<{ status: number; body: A; replayed: boolean }> {
  const { principal, key, scope, request = null } = call;
  const result = await withIdempotency(core.accountWrites, principal.accountId, key, scope, request, () => {
    const write = prepare();
    return async (tx) => ({ status: 200, body: answer(await write(tx)) });
  });
  return result as { status: number; body: A; replayed: boolean };
}

/** Forgets keys older than 24 hours. */
export async function purgeIdempotencyKeys(db: Database): Promise<number> {
  const rows = (await db.execute(
    sql`delete from idempotency_key where created_at < now() - interval '24 hours' returning 1`,
  )) as unknown as unknown[];
  return rows.length;
}
