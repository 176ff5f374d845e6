/**
 * HubSpot through its official client (@hubspot/api-client): the OAuth token endpoints (code exchange,
 * refresh, token info, revoke) and the CRM batch upsert of contacts (by email) and companies (by
 * domain), at most 100 inputs a call (HubSpot's batch limit). A 429 is HubSpot's rolling ten-second
 * window (or the daily limit): the batch is asked again after the wait its headers give. The client's
 * own retries are off: this module decides.
 */
import { createHash } from 'node:crypto';
import { Client } from '@hubspot/api-client';
import type { DestinationsConfig, ProviderApp } from '../../config/destinations.ts';
import {
  type BatchOutcome,
  GrantRefused,
  type MappedRow,
  ProviderUnavailable,
  RetryLater,
  retryAfterMs,
} from './types.ts';

export const HUBSPOT_BATCH = 100;
/** The scopes a connection asks for: write contacts and companies. */
export const HUBSPOT_SCOPES = ['crm.objects.contacts.write', 'crm.objects.companies.write', 'oauth'];

type HubspotConfig = DestinationsConfig['hubspot'];

const client = (config: HubspotConfig, accessToken?: string) =>
  new Client({ basePath: config.apiBase, numberOfApiCallRetries: 0, ...(accessToken ? { accessToken } : {}) });

interface ApiError {
  code?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * HubSpot's rolling window, as this process has used it, per token: when each recent call was sent. A
 * call that leaves none of the window (`X-HubSpot-RateLimit-Remaining: 0`) makes the next one wait until
 * the window's oldest call leaves it, and so does a 429: only as long as the window needs, not a whole
 * window (which would lose the time the window's calls took to send).
 */
const WINDOWS = new Map<string, { sent: number[]; until: number }>();
const WINDOW_MAX_MS = 10_000;

function windowOf(token: string) {
  const key = createHash('sha256').update(token).digest('base64url');
  const state = WINDOWS.get(key) ?? { sent: [], until: 0 };
  WINDOWS.set(key, state);
  const roomIn = (interval: number, now = Date.now()) => {
    const inWindow = state.sent.filter((at) => at > now - interval);
    // Calls of other processes are not in this log: then a whole window.
    return inWindow.length > 0 ? Math.max(25, (inWindow[0] ?? now) + interval - now + 25) : interval;
  };
  return {
    async ready() {
      const wait = state.until - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const now = Date.now();
      state.sent = state.sent.filter((at) => at > now - WINDOW_MAX_MS);
      state.sent.push(now);
    },
    answered(headers: Record<string, string> | undefined) {
      const interval = Number(headers?.['x-hubspot-ratelimit-interval-milliseconds']);
      if (headers?.['x-hubspot-ratelimit-remaining'] === '0' && interval > 0)
        state.until = Date.now() + roomIn(interval);
    },
    /** How long a 429 of the rolling window asks to wait. */
    waitAfter429: (interval: number) => roomIn(interval),
  };
}

/** A client error as this service acts on it. */
function classify(err: unknown, window?: ReturnType<typeof windowOf>): Error {
  const e = err as ApiError;
  if (typeof e?.code !== 'number') return new ProviderUnavailable(`HubSpot could not be reached: ${String(err)}`);
  const body = (typeof e.body === 'string' ? safeJson(e.body) : e.body) as
    | { message?: string; category?: string; policyName?: string }
    | undefined;
  const message = body?.message ?? `HubSpot answered ${e.code}`;
  if (e.code === 429 && body?.policyName === 'DAILY')
    // The day's calls are spent until midnight in the portal's time zone, which the token does not say:
    // asked again each hour until the day turns.
    return new RetryLater(3_600_000, 'HubSpot’s daily limit is spent');
  if (e.code === 429) {
    const interval = Number(e.headers?.['x-hubspot-ratelimit-interval-milliseconds']);
    const whole = Number.isFinite(interval) && interval > 0 ? interval : 10_000;
    const fallback = window ? window.waitAfter429(whole) : whole;
    return new RetryLater(retryAfterMs(e.headers?.['retry-after'], fallback), message);
  }
  if (e.code === 401) return new GrantRefused(message);
  if (e.code >= 500) return new ProviderUnavailable(message);
  return new Error(message);
}

const safeJson = (text: string) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

export interface Tokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

/** Exchanges an authorization code (or a refresh token) for tokens. */
export async function hubspotTokens(
  config: HubspotConfig,
  app: ProviderApp,
  grant: { code: string; redirectUri: string } | { refreshToken: string },
): Promise<Tokens> {
  try {
    const answer =
      'code' in grant
        ? await client(config).oauth.tokensApi.create(
            'authorization_code',
            grant.code,
            grant.redirectUri,
            app.clientId,
            app.clientSecret,
          )
        : await client(config).oauth.tokensApi.create(
            'refresh_token',
            undefined,
            undefined,
            app.clientId,
            app.clientSecret,
            grant.refreshToken,
          );
    return {
      accessToken: answer.accessToken,
      refreshToken: answer.refreshToken ?? null,
      expiresAt: new Date(Date.now() + answer.expiresIn * 1000),
    };
  } catch (err) {
    const e = err as ApiError;
    // A code or refresh token HubSpot does not take (400 BAD_AUTH_CODE, BAD_REFRESH_TOKEN): the grant is gone.
    if (e?.code === 400 || e?.code === 401) throw new GrantRefused(classify(err).message);
    throw classify(err);
  }
}

/** Who a token belongs to: the portal (hub) and the user. */
export async function hubspotWhoAmI(config: HubspotConfig, accessToken: string) {
  try {
    const info = await client(config).oauth.accessTokensApi.get(accessToken);
    return {
      externalId: String(info.hubId),
      externalName: info.hubDomain ?? info.user ?? String(info.hubId),
      scopes: info.scopes?.join(' ') ?? null,
    };
  } catch (err) {
    throw classify(err);
  }
}

/** A private-app token (no token info endpoint for those): checked with a read of the contact properties. */
export async function checkHubspotToken(config: HubspotConfig, token: string) {
  try {
    await client(config, token).crm.properties.coreApi.getAll('contacts');
  } catch (err) {
    throw classify(err);
  }
}

/** Revokes a refresh token at HubSpot (disconnect). */
export async function revokeHubspot(config: HubspotConfig, refreshToken: string) {
  try {
    await client(config).oauth.refreshTokensApi.archive(refreshToken);
  } catch (err) {
    const e = err as ApiError;
    // Already gone at HubSpot: nothing to revoke.
    if (e?.code === 404 || e?.code === 400) return;
    throw classify(err);
  }
}

/** What a batch upserts: contacts by email, or companies by a unique property holding their domain. */
export interface HubspotTarget {
  object: 'contacts' | 'companies';
  /** The unique property records are matched by (`email`; for companies a custom one). */
  idProperty: string;
  /** The mapped field the key comes from, and how it is written. */
  keyField: 'email' | 'domain';
}

/** A company's domain as a key: the host of a domain or website, lower case, without `www.`. */
export function domainKey(value: string | undefined): string | undefined {
  if (!value?.trim()) return undefined;
  const text = value.trim().toLowerCase();
  try {
    const host = new URL(/^[a-z]+:\/\//.test(text) ? text : `http://${text}`).hostname;
    return host.replace(/^www\./, '') || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Upserts one batch (at most HUBSPOT_BATCH rows) of contacts by email, or companies by their domain
 * under the unique property the destination names (HubSpot upserts by unique properties only, and
 * `domain` is not one). A row without its key is skipped. Each input carries its row number as
 * `objectWriteTraceId`, so HubSpot writes the valid inputs and answers 207 with an error for each
 * refused one (without it, one bad input fails the whole batch); a refused row fails alone with
 * HubSpot's reason.
 */
export async function upsertHubspot(
  config: HubspotConfig,
  accessToken: string,
  target: HubspotTarget,
  rows: readonly MappedRow[],
): Promise<BatchOutcome> {
  const problems: BatchOutcome['problems'] = [];
  const byKey = new Map<string, MappedRow>();
  const keyOf = (row: MappedRow) =>
    target.keyField === 'email'
      ? row.fields.email?.trim().toLowerCase() || undefined
      : domainKey(row.fields.domain ?? row.fields.website);
  for (const row of rows) {
    const key = keyOf(row);
    if (!key) {
      const noun = target.object === 'contacts' ? 'contact' : 'company';
      problems.push({ row: row.row, outcome: 'skipped', reason: `no ${target.keyField} to match a ${noun} by` });
    } else if (byKey.has(key))
      problems.push({
        row: row.row,
        outcome: 'skipped',
        reason: `the same ${target.keyField} as row ${byKey.get(key)?.row}`,
      });
    else byKey.set(key, row);
  }
  if (byKey.size === 0) return { created: 0, updated: 0, problems };
  const inputs = [...byKey].map(([key, row]) => {
    const { [target.idProperty]: _key, ...properties } = row.fields;
    if (target.keyField === 'domain') properties.domain = key;
    return { idProperty: target.idProperty, id: key, objectWriteTraceId: String(row.row), properties };
  });
  const api = client(config, accessToken).crm[target.object].batchApi;
  let answer: Awaited<ReturnType<typeof api.upsert>>;
  const window = windowOf(accessToken);
  await window.ready();
  try {
    const sent = await api.upsertWithHttpInfo({ inputs });
    window.answered(sent.headers);
    answer = sent.data;
  } catch (err) {
    const classified = classify(err, window);
    if (
      classified instanceof RetryLater ||
      classified instanceof GrantRefused ||
      classified instanceof ProviderUnavailable
    )
      throw classified;
    // The whole batch refused (a property the portal does not have…): each row fails with the reason.
    for (const row of byKey.values()) problems.push({ row: row.row, outcome: 'failed', reason: classified.message });
    return { created: 0, updated: 0, problems };
  }
  let created = 0;
  let updated = 0;
  const done = new Set<string>();
  // Results come in any order: matched by the key HubSpot stored (emails in lower case).
  for (const result of answer.results) {
    done.add(String(result.properties?.[target.idProperty] ?? result.id).toLowerCase());
    if (result._new) created++;
    else updated++;
  }
  type Refusal = { message: string; context?: Record<string, string[]> };
  const errors = ('errors' in answer ? (answer.errors as Refusal[] | undefined) : undefined) ?? [];
  const reasonOf = (row: MappedRow) =>
    errors.find((e) => e.context?.objectWriteTraceId?.includes(String(row.row)))?.message;
  for (const [key, row] of byKey) {
    if (done.has(key)) continue;
    problems.push({ row: row.row, outcome: 'failed', reason: reasonOf(row) ?? 'HubSpot did not take it' });
  }
  return { created, updated, problems };
}

/** The unique-value properties of an object (what companies can be upserted by). */
export async function hubspotUniqueProperties(config: HubspotConfig, accessToken: string, object: 'companies') {
  try {
    const answer = await client(config, accessToken).crm.properties.coreApi.getAll(object);
    return answer.results.filter((p) => p.hasUniqueValue).map((p) => p.name);
  } catch (err) {
    throw classify(err);
  }
}

/** Contacts, upserted by email. */
export const HUBSPOT_CONTACTS: HubspotTarget = { object: 'contacts', idProperty: 'email', keyField: 'email' };
export const upsertHubspotContacts = (config: HubspotConfig, accessToken: string, rows: readonly MappedRow[]) =>
  upsertHubspot(config, accessToken, HUBSPOT_CONTACTS, rows);
