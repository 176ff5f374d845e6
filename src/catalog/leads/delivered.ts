import type { Sql } from '../../../db/client.ts';
import type { LeadRow } from './query.ts';

/*
 * The leads each account has received from the lead database (`delivered_lead`): they never count
 * against its daily allowance again, and `excludeDelivered` leaves them out of a search (leadConditions).
 */

/** Which of `personIds` the account has received already. */
export async function deliveredAmong(sql: Sql, accountId: string, personIds: readonly string[]): Promise<Set<string>> {
  const rows = await sql<
    { id: string }[]
  >`select person_id::text as id from delivered_lead where account_id = ${accountId}
    and person_id = any(${[...personIds]}::bigint[])`;
  return new Set(rows.map((r) => r.id));
}

/** Records people as received by the account. */
export async function recordDelivered(sql: Sql, accountId: string, personIds: readonly string[]): Promise<void> {
  if (personIds.length === 0) return;
  await sql`insert into delivered_lead (account_id, person_id) select ${accountId}, unnest(${[...personIds]}::bigint[])
    on conflict do nothing`;
}

/**
 * The account's received leads among `personIds` (refetching a lead
 * by id), in the order of `personIds`; null where not received.
 */
export async function loadDeliveredLeads(
  sql: Sql,
  accountId: string,
  personIds: readonly string[],
): Promise<(LeadRow | null)[]> {
  const rows = await sql<LeadRow[]>`
    select p.id::text as id, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status,
           p.phone, p.mobile, p.linkedin_url, p.city, p.state, p.country, p.company_id::text as company_id
    from delivered_lead d join person p on p.id = d.person_id
    where d.account_id = ${accountId} and d.person_id = any(${[...personIds]}::bigint[])`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return personIds.map((id) => byId.get(id) ?? null);
}

/** Which of `companyIds` employ a lead the account has received (refetching a company by id). */
export async function companiesOfDeliveredLeads(
  sql: Sql,
  accountId: string,
  companyIds: readonly number[],
): Promise<Set<number>> {
  const rows = await sql<{ id: string }[]>`
    select distinct p.company_id::text as id
    from delivered_lead d join person p on p.id = d.person_id
    where d.account_id = ${accountId} and p.company_id = any(${[...companyIds]}::bigint[])`;
  return new Set(rows.map((r) => Number(r.id)));
}
