import type { Sql } from '../../../db/client.ts';

/*
 * The leads each account has received from the lead database (`delivered_lead`): they never count
 * against its daily allowance again, and `excludeDelivered` leaves them out of a search (leadConditions).
 */

/** Which of `personIds` the account has received already. */
export async function deliveredAmong(sql: Sql, accountId: string, personIds: readonly string[]): Promise<Set<string>> {
  const rows = await sql<{ id: string }[]>`select person_id::text as id from delivered_lead where account_id = ${accountId} and person_id = any(${[...personIds]}::bigint[])`;
  return new Set(rows.map((r) => r.id));
}

/** Records people as received by the account. */
export async function recordDelivered(sql: Sql, accountId: string, personIds: readonly string[]): Promise<void> {
  if (personIds.length === 0) return;
  await sql`insert into delivered_lead (account_id, person_id) select ${accountId}, unnest(${[...personIds]}::bigint[]) on conflict do nothing`;
}
