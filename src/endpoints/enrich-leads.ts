import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import {
  assertMatchable,
  enrichmentAnswer,
  readEnrichRequest,
  skipUnusable,
  textField,
  type EnrichOptions,
  type EnrichResult,
} from './enrichment.ts';
import {
  companyOf,
  lookUpLeads,
  MATCH_KEYS,
  nameKey,
  personOf,
  type Keys,
  type MatchKey,
} from '../catalog/leads/enrich-lookup.ts';
import { normaliseSocialUrl } from '../catalog/leads/query.ts';
import { assignLeadRecord } from '../catalog/leads/lead-record.ts';
import { bareHost } from '../shared/hosts.ts';

export type { Keys, MatchKey };

/** Input columns callers use for the same thing (the name's only read when names are matched). */
const ALIASES = {
  email: ['email'],
  social: ['social', 'social_url', 'linkedin_url', 'linkedin'],
  mobile: ['mobile', 'mobile_phone', 'phone'],
  domain: ['domain', 'company_domain', 'website', 'company_website'],
  fullName: ['full_name', 'name'],
  firstName: ['first_name'],
  lastName: ['last_name'],
  company: ['company', 'company_name', 'organization'],
} satisfies Record<string, string[]>;

const lastTen = (phone: string) => phone.replace(/\D/g, '').slice(-10);
/** A value quoted in a reason, cut short. */
const quoted = (value: string) => `“${value.length > 60 ? `${value.slice(0, 59)}…` : value}”`;

/** A row's keys, and in plain words each value given that cannot be used. */
type RowKeys = Keys & { unusable: string[] };

function keysOf(row: Record<string, unknown>, matchNames: boolean): RowKeys {
  const keys: RowKeys = { unusable: [] };
  const email = textField(row, ...ALIASES.email);
  if (email && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) keys.email = email.toLowerCase();
  else if (email) keys.unusable.push(`the email ${quoted(email)} is not an email address`);
  const social = textField(row, ...ALIASES.social);
  if (social) keys.social = normaliseSocialUrl(social);
  const mobile = textField(row, ...ALIASES.mobile);
  const digits = mobile && lastTen(mobile);
  if (digits && digits.length === 10) keys.mobile = digits;
  else if (mobile) keys.unusable.push(`the mobile number ${quoted(mobile)} has fewer than 10 digits`);
  const domain = textField(row, ...ALIASES.domain);
  const host = domain && bareHost(domain);
  if (host?.includes('.')) keys.domain = host;
  else if (domain) keys.unusable.push(`the company domain ${quoted(domain)} is not a domain`);
  if (matchNames) {
    const first = textField(row, ...ALIASES.firstName);
    const last = textField(row, ...ALIASES.lastName);
    const full = textField(row, ...ALIASES.fullName) ?? (first && last ? `${first} ${last}` : undefined);
    const company = textField(row, ...ALIASES.company);
    if (full && (keys.domain || company))
      keys.name = nameKey(full, keys.domain ? { domain: keys.domain } : { name: company as string });
    else if (full || first || last) keys.unusable.push('a name needs a company or company domain beside it');
  }
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

/** Why a row cannot be matched, in plain words; empty when it can. */
function problemsOf(k: RowKeys, matchNames: boolean): string[] {
  if (!noKeys(k) || k.name !== undefined) return [];
  const what = matchNames
    ? 'no email, LinkedIn URL, mobile, company domain, or name and company to match on'
    : 'no email, LinkedIn URL, mobile or company domain to match on';
  return [...k.unusable, what];
}

/**
 * Lead enrichment (its declaration holds the plan gate). Match priority: email, social profile URL, mobile (last
 * 10 digits, country codes ignored), company domain (its most senior person). Matches count against
 * the daily allowance of 100,000; a preview (match count and a sample with LEAD_CONTACTS masked) does
 * not. All rows are looked up together, in at most seven queries (catalog/leads/enrich-lookup.ts).
 *
 * As the spec has it (REST, MCP), a request with a row that has nothing to match on is refused whole. The
 * console and GraphQL ask for more (EnrichOptions): such rows skipped and reported with their reasons, and
 * a full name at a company (its domain, or its name) matched before the domain's most senior person.
 */
export async function enrichLeads(
  core: Pick<Core, 'sql' | 'db' | 'catalogReader' | 'config' | 'clock'>,
  principal: Principal,
  body: unknown,
  options: EnrichOptions = {},
): Promise<EnrichResult<MatchKey>> {
  const matchNames = options.matchNames === true;
  const request = readEnrichRequest(body, (row) => keysOf(row, matchNames));
  let skipped: ReturnType<typeof skipUnusable>['skipped'] | undefined;
  let keys: (RowKeys | undefined)[] = request.keys;
  if (options.skipUnusable) ({ keys, skipped } = skipUnusable(request.keys, (k) => problemsOf(k, matchNames)));
  else assertMatchable(keys, noKeys, 'email, social, mobile, domain');
  const usable = keys.filter((k): k is RowKeys => k !== undefined);
  const found = await core.catalogReader.read((sql) => lookUpLeads(sql, usable));
  const kinds = matchNames ? MATCH_KEYS : MATCH_KEYS.filter((k) => k !== 'name');
  const matches = keys.map((k) => {
    if (!k) return undefined;
    for (const kind of kinds) {
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
    kinds,
    (row, m) => assignLeadRecord(row, personOf(m.person), companyOf(m.person)),
    LEAD_CONTACTS,
    { skipped, job: options.job && { ...options.job, createdBy: principal.userId ?? null } },
  );
}
