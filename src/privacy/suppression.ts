/**
 * Suppression: the people no row may carry out of the gateway. One rule in one place: a row is
 * suppressed when any identifier in it (an e-mail anywhere in it, or its domain; a phone number in a
 * phone column; a social profile URL) is on the deployment's list or on the row's account's own list.
 * Rows are checked where they are produced (a run's batches, a lead search's page, an enrichment's
 * answer, an import), one query a batch, and a suppressed row is dropped whole and counted, never billed.
 */
import { randomBytes } from 'node:crypto';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { eq, isNull, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Database, Executor } from '../../db/client.ts';
import {
  type HashedListType,
  SUPPRESSION_KINDS,
  type SuppressionKind,
  type SuppressionSource,
  suppressionTable,
} from '../../db/tables/privacy.ts';
import type { Row } from '../tools/types.ts';
import { dropHash } from './drop/hash.ts';
import { standardizeEmail, standardizePhone } from './drop/standardize.ts';

export const newSuppressionId = () => `sup_${randomBytes(10).toString('base64url')}`;

const EMAIL = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+/g;
const SOCIAL_HOSTS = ['linkedin.com', 'twitter.com', 'x.com', 'facebook.com', 'instagram.com', 'github.com'];
const US_WRITTEN = /^\+1 ([2-9]\d{2})-(\d{3})-(\d{4})$/;
/** Columns whose values are phone numbers of the person or business the row is about. */
const PHONE_COLUMN = /(^|_)(phone|phones|mobile|mobiles)$/;

/** A phone number in E.164 (read as a US number when it has no country code), or undefined. */
export function normalPhone(value: string): string | undefined {
  // The form most of the catalog writes (`+1 303-555-0142`), read without the parser (11 µs a number);
  // libphonenumber gives the same for every such number.
  const us = US_WRITTEN.exec(value);
  if (us) return `+1${us[1]}${us[2]}${us[3]}`;
  const parsed = parsePhoneNumberFromString(value, 'US');
  return parsed?.isPossible() ? parsed.number : undefined;
}

/** A profile URL as compared: host without `www.` and path, lower case, no scheme, query or trailing slash. */
export function normalProfile(value: string): string | undefined {
  try {
    const url = new URL(/^[a-z]+:\/\//i.test(value.trim()) ? value.trim() : `https://${value.trim()}`);
    const host = url.hostname.toLowerCase().replace(/^(www|m|mobile)\./, '');
    if (!SOCIAL_HOSTS.some((h) => host === h || host.endsWith(`.${h}`))) return undefined;
    const path = decodeURIComponent(url.pathname).toLowerCase().replace(/\/+$/, '');
    return path ? `${host}${path}` : undefined;
  } catch {
    return undefined;
  }
}

/** An entry's value as kept and compared, or why it cannot be one. */
export function normalIdentifier(kind: SuppressionKind, raw: string): { value: string } | { refused: string } {
  const value = raw.trim();
  switch (kind) {
    case 'email': {
      const email = value.toLowerCase();
      return /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) ? { value: email } : { refused: 'must be an e-mail address' };
    }
    case 'domain': {
      const domain = value
        .toLowerCase()
        .replace(/^@/, '')
        .replace(/^www\./, '');
      return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain)
        ? { value: domain }
        : { refused: 'must be a domain (acme.com)' };
    }
    case 'phone': {
      const phone = normalPhone(value);
      return phone ? { value: phone } : { refused: 'must be a phone number (with its country code outside the US)' };
    }
    case 'profile': {
      const profile = normalProfile(value);
      return profile
        ? { value: profile }
        : { refused: `must be a profile URL on ${SOCIAL_HOSTS.slice(0, 3).join(', ')} or a similar site` };
    }
    case 'hash':
      return /^[a-z]+:[A-Za-z0-9+/=_-]{16,200}$/.test(value)
        ? { value }
        : { refused: 'must be a DROP hash as <list type>:<hash>' };
  }
}

type Identifiers = Record<Exclude<SuppressionKind, 'hash'>, Set<string>>;
/**
 * A row's identifiers and their DROP hashes, kept while the row lives: a run's batch is checked here and
 * then indexed as it is stored (identifier-index.ts), the same row objects, read once.
 */
const identifiersSeen = new WeakMap<Row, Identifiers>();
const hashesSeen = new WeakMap<Identifiers, { listType: HashedListType; hash: string }[]>();

/** The identifiers a row carries, normalised: its e-mails and their domains, phones, profiles. */
export function identifiersOf(row: Row): Identifiers {
  const known = identifiersSeen.get(row);
  if (known) return known;
  const found = {
    email: new Set<string>(),
    domain: new Set<string>(),
    phone: new Set<string>(),
    profile: new Set<string>(),
  };
  const visit = (key: string, value: unknown) => {
    if (Array.isArray(value)) for (const item of value) visit(key, item);
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) visit(k, v);
    else if (typeof value === 'string' && value.length < 2_000) {
      for (const email of value.match(EMAIL) ?? []) {
        const lower = email.toLowerCase();
        found.email.add(lower);
        found.domain.add(lower.slice(lower.indexOf('@') + 1));
      }
      if (PHONE_COLUMN.test(key)) {
        const phone = normalPhone(value);
        if (phone) found.phone.add(phone);
      }
      if (/linkedin|twitter|facebook|instagram|github|profile|url/.test(key)) {
        const profile = normalProfile(value);
        if (profile) found.profile.add(profile);
      }
    }
  };
  for (const [key, value] of Object.entries(row)) visit(key, value);
  identifiersSeen.set(row, found);
  return found;
}

/**
 * Checks rows for one account (null: the deployment's list alone, as the shared catalog's imports do):
 * which of them are suppressed, one query for the whole batch.
 */
export type SuppressionCheck = (rows: readonly Row[]) => Promise<boolean[]>;

/**
 * The DROP hashes of a row's identifiers (its e-mails and phones), each as `<list type>:<hash>` as `hash`
 * entries are kept: a person a DROP list named is suppressed whatever form their identifiers take here.
 */
export function dropHashesOf(ids: Identifiers): { listType: HashedListType; hash: string }[] {
  const known = hashesSeen.get(ids);
  if (known) return known;
  const hashes: { listType: HashedListType; hash: string }[] = [];
  for (const email of ids.email) {
    const standard = standardizeEmail(email);
    if (standard) hashes.push({ listType: 'email', hash: dropHash(standard) });
  }
  for (const phone of ids.phone) {
    const standard = standardizePhone(phone);
    if (standard) hashes.push({ listType: 'phone', hash: dropHash(standard) });
  }
  hashesSeen.set(ids, hashes);
  return hashes;
}

export const hashEntry = (listType: string, hash: string) => `${listType.toLowerCase()}:${hash}`;

/** Runs the check's one query (SQL text and its parameters), where a drizzle executor is not at hand. */
export type RunQuery = (text: string, params: unknown[]) => Promise<{ kind: string; value: string }[]>;

const dialect = new PgDialect();

export function suppressionCheck(db: Executor | RunQuery, accountId: string | null): SuppressionCheck {
  return async (rows) => {
    if (rows.length === 0) return [];
    const ids = rows.map(identifiersOf);
    const wanted = new Map<SuppressionKind, Set<string>>(SUPPRESSION_KINDS.map((k) => [k, new Set()]));
    const hashes = ids.map((id) => dropHashesOf(id).map((h) => hashEntry(h.listType, h.hash)));
    ids.forEach((id, i) => {
      for (const kind of ['email', 'domain', 'phone', 'profile'] as const)
        for (const value of id[kind]) wanted.get(kind)?.add(value);
      for (const hash of hashes[i] ?? []) wanted.get('hash')?.add(hash);
    });
    const pairs = [...wanted].flatMap(([kind, values]) => [...values].map((value) => [kind, value]));
    if (pairs.length === 0) return rows.map(() => false);
    // One index lookup a (kind, value) pair; the pairs travel as one JSON parameter (a batch may name
    // tens of thousands).
    const query = sql`select s.kind, s.value
      from json_array_elements(${JSON.stringify(pairs)}::json) e
      join suppression s on s.kind = e ->> 0 and s.value = e ->> 1
      where ${accountId ? sql`(s.account_id is null or s.account_id = ${accountId})` : sql`s.account_id is null`}`;
    const compiled = typeof db === 'function' ? dialect.sqlToQuery(query) : undefined;
    const hits =
      typeof db === 'function' && compiled
        ? await db(compiled.sql, compiled.params)
        : ((await (db as Executor).execute(query)) as unknown as { kind: string; value: string }[]);
    if (hits.length === 0) return rows.map(() => false);
    const listed = new Set(hits.map((h) => `${h.kind}\u0000${h.value}`));
    return ids.map((id, i) => {
      for (const kind of ['email', 'domain', 'phone', 'profile'] as const)
        for (const value of id[kind]) if (listed.has(`${kind}\u0000${value}`)) return true;
      return (hashes[i] ?? []).some((hash) => listed.has(`hash\u0000${hash}`));
    });
  };
}

/** Rows without the suppressed ones, and how many were dropped. */
export async function withoutSuppressed<R extends Row>(check: SuppressionCheck, rows: R[]) {
  const suppressed = await check(rows);
  const kept = rows.filter((_, i) => !suppressed[i]);
  return { rows: kept, suppressed: rows.length - kept.length };
}

/** Adds entries (normalised already), each once per list; answers how many were new. */
export async function addSuppressions(
  db: Executor,
  accountId: string | null,
  entries: readonly { kind: SuppressionKind; value: string }[],
  source: SuppressionSource,
  by: { userId?: string | null; note?: string | null } = {},
): Promise<number> {
  if (entries.length === 0) return 0;
  const added = await db
    .insert(suppressionTable)
    .values(
      entries.map((e) => ({
        id: newSuppressionId(),
        accountId,
        kind: e.kind,
        value: e.value,
        source,
        note: by.note ?? null,
        createdBy: by.userId ?? null,
      })),
    )
    .onConflictDoNothing()
    .returning({ id: suppressionTable.id });
  return added.length;
}

/** How many entries a list holds (the deployment's with no account). */
export async function countSuppressions(db: Database, accountId: string | null) {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(suppressionTable)
    .where(accountId ? eq(suppressionTable.accountId, accountId) : isNull(suppressionTable.accountId));
  return row?.n ?? 0;
}
