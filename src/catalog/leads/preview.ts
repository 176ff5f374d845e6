import type { Sql } from '../../../db/client.ts';
import type { CompanyRecord } from './companies.ts';
import { leadRecord } from './lead-record.ts';
import type { LeadRow } from './query.ts';

/*
 * The free view of the lead database (searching is free, contact details cost): a person as a
 * preview shows them, without email, phone or mobile, only whether each exists and the email's
 * status. Revealing the contact details is the metered path (the lead search, or `selectLeadsByIds`).
 */

/** The most people one reveal hands over (a page of the lead search). */
export const MAX_REVEAL = 100;

/** A person without contact details: whether an email and a phone exist, and whether the account has them. */
export interface LeadPreviewRow extends Omit<LeadRow, 'email' | 'phone' | 'mobile'> {
  has_email: boolean;
  has_phone: boolean;
  /** The account has received this lead already: revealing it again costs nothing. */
  received: boolean;
}

/** A person's preview: the contact details dropped, their presence kept. */
export function previewOf(row: LeadRow, received: boolean): LeadPreviewRow {
  const { email, phone, mobile, ...rest } = row;
  return { ...rest, has_email: email !== null, has_phone: phone !== null || mobile !== null, received };
}

/** People of the lead database by id, in the order of `ids`; ids with no person are left out. */
export async function selectLeadsByIds(sql: Sql, ids: readonly string[]): Promise<LeadRow[]> {
  const rows = await sql<LeadRow[]>`
    select p.id::text as id, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status,
           p.phone, p.mobile, p.linkedin_url, p.city, p.state, p.country, p.company_id::text as company_id
    from person p where p.id = any(${[...ids]}::bigint[])`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** A preview as REST and MCP answer it: the lead record (no contact details to leave out), then the three flags. */
export function leadPreviewRecord(row: LeadPreviewRow, company: CompanyRecord | undefined): Record<string, unknown> {
  const { has_email, has_phone, received, ...person } = row;
  return {
    ...leadRecord({ ...person, email: null, phone: null, mobile: null }, company),
    has_email,
    has_phone,
    received,
  };
}
