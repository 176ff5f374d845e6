import type { Sql } from '../../../db/client.ts';
import type { Core } from '../../core.ts';
import type { Principal } from '../accounts.ts';
import { takeAllowance } from '../allowances.ts';
import { ValidationError } from '../errors.ts';
import { assertPlan } from '../plans.ts';
import { normaliseSocialUrl, type LeadRow } from './query.ts';
import { leadRecord, loadCompanies } from './search.ts';

export const MAX_ENRICH_ROWS = 1000;
const MATCH_KEYS = ['email', 'social', 'mobile', 'domain'] as const;
type MatchKey = (typeof MATCH_KEYS)[number];

/** Input columns callers use for the same thing. */
const ALIASES: Record<MatchKey, string[]> = {
  email: ['email'],
  social: ['social', 'social_url', 'linkedin_url', 'linkedin'],
  mobile: ['mobile', 'mobile_phone', 'phone'],
  domain: ['domain', 'company_domain', 'website', 'company_website'],
};

interface Keys {
  email?: string;
  social?: string;
  mobile?: string;
  domain?: string;
}

const lastTen = (phone: string) => phone.replace(/\D/g, '').slice(-10);
export const normaliseDomain = (value: string) => value.trim().toLowerCase().replace(/^[a-z]+:\/\//, '').replace(/^www\./, '').replace(/[/?#:].*$/, '');

function keysOf(row: Record<string, unknown>): Keys {
  const pick = (names: string[]) => {
    for (const name of names) {
      const v = row[name];
      if (typeof v === 'string' && v.trim()) return v.trim();
    }
    return undefined;
  };
  const keys: Keys = {};
  const email = pick(ALIASES.email);
  if (email && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) keys.email = email.toLowerCase();
  const social = pick(ALIASES.social);
  if (social) keys.social = normaliseSocialUrl(social);
  const mobile = pick(ALIASES.mobile);
  if (mobile && lastTen(mobile).length === 10) keys.mobile = lastTen(mobile);
  const domain = pick(ALIASES.domain);
  if (domain && normaliseDomain(domain).includes('.')) keys.domain = normaliseDomain(domain);
  return keys;
}

/** Validates `{rows, preview}`: 1 to 1,000 objects, each with something to match on; 400 lists the bad rows. */
export function parseEnrichRequest<K>(body: unknown, keysOfRow: (row: Record<string, unknown>) => K, isEmpty: (keys: K) => boolean, need: string) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError([{ path: '', message: 'the body must be a JSON object with rows' }]);
  const { rows, preview } = body as { rows?: unknown; preview?: unknown };
  if (!Array.isArray(rows)) throw new ValidationError([{ path: 'rows', message: 'rows must be an array of objects' }]);
  if (rows.length === 0) throw new ValidationError([{ path: 'rows', message: 'rows must not be empty' }]);
  if (rows.length > MAX_ENRICH_ROWS) throw new ValidationError([{ path: 'rows', message: `at most ${MAX_ENRICH_ROWS} rows per request (got ${rows.length}); split the file` }]);
  if (preview !== undefined && typeof preview !== 'boolean') throw new ValidationError([{ path: 'preview', message: 'preview must be true or false' }]);
  const errors: { path: string; message: string }[] = [];
  const keys = rows.map((row, i) => {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      errors.push({ path: `rows.${i}`, message: 'must be an object' });
      return undefined;
    }
    const k = keysOfRow(row as Record<string, unknown>);
    if (isEmpty(k)) errors.push({ path: `rows.${i}`, message: `needs at least one of ${need}` });
    return k;
  });
  if (errors.length > 0) throw new ValidationError(errors, `${errors.length} row${errors.length === 1 ? '' : 's'} cannot be matched: ${errors.slice(0, 5).map((e) => e.path).join(', ')}${errors.length > 5 ? ', …' : ''}`);
  return { rows: rows as Record<string, unknown>[], keys: keys as K[], preview: preview === true };
}

const PERSON_COLUMNS = 'p.id, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status, p.phone, p.mobile, p.linkedin_url, p.city, p.state, p.country, p.company_id';

/** Every lookup of a request in four queries, one per match kind, whatever the number of rows. */
async function lookUp(sql: Sql, keys: Keys[]) {
  const distinct = (k: MatchKey) => [...new Set(keys.map((x) => x[k]).filter((v): v is string => v !== undefined))];
  const [emails, socials, mobiles, domains] = MATCH_KEYS.map(distinct);
  const [byEmail, bySocial, byMobile, byDomain] = await Promise.all([
    emails!.length ? sql.unsafe<(LeadRow & { k: string })[]>(`select lower(p.email) as k, ${PERSON_COLUMNS} from person p where lower(p.email) = any($1)`, [emails] as never) : [],
    socials!.length ? sql.unsafe<(LeadRow & { k: string })[]>(`select lower(p.linkedin_url) as k, ${PERSON_COLUMNS} from person p where lower(p.linkedin_url) = any($1)`, [socials] as never) : [],
    mobiles!.length
      ? sql.unsafe<(LeadRow & { k: string })[]>(
          `select right(regexp_replace(p.mobile, '\\D', '', 'g'), 10) as k, ${PERSON_COLUMNS} from person p where right(regexp_replace(p.mobile, '\\D', '', 'g'), 10) = any($1) order by p.id`,
          [mobiles] as never,
        )
      : [],
    // The most senior person at each domain: CEO, other C-suite, VP, Director, then others.
    domains!.length
      ? sql.unsafe<(LeadRow & { k: string })[]>(
          `select distinct on (c.domain) c.domain as k, ${PERSON_COLUMNS}
           from company c join person p on p.company_id = c.id
           where c.domain = any($1)
           order by c.domain,
             case when p.title ~* '^(ceo|chief executive officer)$' then 0 when p.seniority = 'c_suite' then 1 when p.seniority = 'vp' then 2
                  when p.seniority in ('director', 'head') then 3 else 4 end,
             p.id`,
          [domains] as never,
        )
      : [],
  ]);
  const index = (rows: (LeadRow & { k: string })[]) => {
    const map = new Map<string, LeadRow>();
    for (const r of rows) if (!map.has(r.k)) map.set(r.k, r);
    return map;
  };
  return { email: index(byEmail), social: index(bySocial), mobile: index(byMobile), domain: index(byDomain) };
}

export interface EnrichResult {
  rows?: Record<string, unknown>[];
  summary: { total: number; matched: number; not_found: number; by: Record<MatchKey, number> };
  daily_allowance?: { remaining: number };
  preview?: true;
  sample?: Record<string, unknown>[];
}

/**
 * POST /api/v1/enrich (growth plan and up). Match priority: email, social profile URL, mobile (last
 * 10 digits, country codes ignored), company domain (its most senior person). Matches count against
 * the daily allowance of 100,000; a preview (match count and a sample) does not.
 */
export async function enrichLeads(core: Pick<Core, 'sql' | 'config' | 'clock'>, principal: Principal, body: unknown): Promise<EnrichResult> {
  assertPlan(principal, 'growth', 'Lead enrichment');
  const request = parseEnrichRequest(body, keysOf, (k) => Object.keys(k).length === 0, 'email, social, mobile, domain');
  return core.sql.begin(async (tx) => {
    const sql = tx as unknown as Sql;
    const found = await lookUp(sql, request.keys);
    const matches = request.keys.map((k) => {
      for (const kind of MATCH_KEYS) {
        const value = k[kind];
        const person = value === undefined ? undefined : found[kind].get(value);
        if (person) return { kind, person };
      }
      return undefined;
    });
    const matchedCount = matches.filter(Boolean).length;
    let granted = matchedCount;
    let remaining: number | undefined;
    if (!request.preview && matchedCount > 0) {
      const taken = await takeAllowance(sql, principal.accountId, 'enrichment', matchedCount, core.config.dailyEnrichmentMatches, core.clock());
      granted = taken.granted;
      remaining = taken.remaining;
    }
    const companies = await loadCompanies(sql, [...new Set(matches.map((m) => m?.person.company_id).filter((id): id is string => !!id).map(Number))]);
    const by = Object.fromEntries(MATCH_KEYS.map((k) => [k, 0])) as Record<MatchKey, number>;
    let used = 0;
    const rows = request.rows.map((input, i) => {
      const m = matches[i];
      if (!m) return { ...input, match_status: 'not_found', matched_by: null };
      if (used >= granted) return { ...input, match_status: 'daily_limit_reached', matched_by: null };
      used += 1;
      by[m.kind] += 1;
      const { id: _id, ...record } = leadRecord(m.person, m.person.company_id ? companies.get(Number(m.person.company_id)) : undefined);
      return { ...input, match_status: 'matched', matched_by: m.kind, ...record };
    });
    const summary = { total: rows.length, matched: used, not_found: rows.length - matchedCount, by };
    if (request.preview) return { preview: true, summary, sample: rows.filter((r) => r.match_status === 'matched').slice(0, 5) };
    return { rows, summary, daily_allowance: { remaining: remaining ?? (await takeAllowance(sql, principal.accountId, 'enrichment', 0, core.config.dailyEnrichmentMatches, core.clock())).remaining } };
  });
}
