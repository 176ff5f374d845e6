import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { enrichmentAnswer, parseEnrichRequest, textField, type EnrichResult } from './enrichment.ts';
import {
  companyOf,
  lookUpLeads,
  MATCH_KEYS,
  personOf,
  type Keys,
  type MatchKey,
} from '../catalog/leads/enrich-lookup.ts';
import { normaliseSocialUrl } from '../catalog/leads/query.ts';
import { assignLeadRecord } from '../catalog/leads/lead-record.ts';
import { bareHost } from '../shared/hosts.ts';

export type { Keys, MatchKey };

/** Input columns callers use for the same thing. */
const ALIASES: Record<MatchKey, string[]> = {
  email: ['email'],
  social: ['social', 'social_url', 'linkedin_url', 'linkedin'],
  mobile: ['mobile', 'mobile_phone', 'phone'],
  domain: ['domain', 'company_domain', 'website', 'company_website'],
};

const lastTen = (phone: string) => phone.replace(/\D/g, '').slice(-10);

function keysOf(row: Record<string, unknown>): Keys {
  const keys: Keys = {};
  const email = textField(row, ...ALIASES.email);
  if (email && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) keys.email = email.toLowerCase();
  const social = textField(row, ...ALIASES.social);
  if (social) keys.social = normaliseSocialUrl(social);
  const mobile = textField(row, ...ALIASES.mobile);
  const digits = mobile && lastTen(mobile);
  if (digits && digits.length === 10) keys.mobile = digits;
  const domain = textField(row, ...ALIASES.domain);
  const host = domain && bareHost(domain);
  if (host?.includes('.')) keys.domain = host;
  return keys;
}

/**
 * The lead record's contact values, masked in a preview: the person's email, phone, mobile and
 * profile URL, and the company's phone. The company's own pages (website, social profiles) are public.
 */
export const LEAD_CONTACTS = {
  emails: ['email'],
  phones: ['phone', 'mobile', 'company_phone'],
  profiles: ['linkedin_url'],
} as const;

const noKeys = (k: Keys) =>
  k.email === undefined && k.social === undefined && k.mobile === undefined && k.domain === undefined;

/**
 * Lead enrichment (its declaration holds the plan gate). Match priority: email, social profile URL, mobile (last
 * 10 digits, country codes ignored), company domain (its most senior person). Matches count against
 * the daily allowance of 100,000; a preview (match count and a sample with LEAD_CONTACTS masked) does
 * not. All rows are looked up together, in at most five queries (catalog/leads/enrich-lookup.ts).
 */
export async function enrichLeads(
  core: Pick<Core, 'sql' | 'db' | 'catalogReader' | 'config' | 'clock'>,
  principal: Principal,
  body: unknown,
): Promise<EnrichResult<MatchKey>> {
  const request = parseEnrichRequest(body, keysOf, noKeys, 'email, social, mobile, domain');
  const found = await core.catalogReader.read((sql) => lookUpLeads(sql, request.keys));
  const matches = request.keys.map((k) => {
    for (const kind of MATCH_KEYS) {
      const value = k[kind];
      const person = value === undefined ? undefined : found[kind].get(value);
      if (person) return { kind, person };
    }
    return undefined;
  });
  return enrichmentAnswer(
    core,
    principal.accountId,
    request,
    matches,
    MATCH_KEYS,
    (row, m) => assignLeadRecord(row, personOf(m.person), companyOf(m.person)),
    LEAD_CONTACTS,
  );
}
