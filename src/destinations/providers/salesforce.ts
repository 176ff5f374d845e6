/**
 * Salesforce through its official client (jsforce): the OAuth 2.0 web server flow (code exchange,
 * revoke), and Leads or Contacts upserted by an external-id field: up to 200 records a call with sObject
 * Collections for small sets, and a Bulk API 2.0 ingest job (created, uploaded as CSV, closed, polled to
 * its end, its failed rows read back) for large ones. Salesforce gives no expiry with a token: jsforce
 * refreshes a session that answers 401 by itself and says so (`refresh`), and the new token is kept.
 * Calls past the org's daily API allowance are refused (REQUEST_LIMIT_EXCEEDED): the delivery waits.
 */
import jsforce from 'jsforce';
import { stringify } from 'csv-stringify/sync';
import type { DestinationsConfig, ProviderApp } from '../../config/destinations.ts';
import type { Tokens } from './hubspot.ts';
import { type BatchOutcome, GrantRefused, type MappedRow, ProviderUnavailable, RetryLater } from './types.ts';

type SalesforceConfig = DestinationsConfig['salesforce'];

/** The API version spoken: sObject Collections upsert needs 46.0 or later. */
export const SALESFORCE_VERSION = '62.0';
export const SALESFORCE_SCOPES = ['api', 'refresh_token'];
/** sObject Collections take at most 200 records a call. */
export const COLLECTION_BATCH = 200;
/** From this many rows a delivery goes through Bulk API 2.0, one ingest job per 10,000 rows. */
export const BULK_FROM = 2_000;
export const BULK_BATCH = 10_000;
/** A day's API allowance spent: Salesforce counts over a rolling 24 hours; asked again in an hour. */
const ALLOWANCE_WAIT_MS = 3_600_000;
const POLL_MS = 1_000;

/** A session at an org: where it answers, its tokens, and what to do with a refreshed access token. */
export interface SalesforceSession {
  instanceUrl: string;
  accessToken: string;
  refreshToken: string | null;
  onRefresh(accessToken: string): Promise<void>;
}

const oauth2 = (config: SalesforceConfig, app: ProviderApp, redirectUri?: string) =>
  new jsforce.OAuth2({
    loginUrl: config.loginUrl,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    ...(redirectUri ? { redirectUri } : {}),
  });

function connect(config: SalesforceConfig, app: ProviderApp | undefined, session: SalesforceSession) {
  const conn = new jsforce.Connection({
    ...(app ? { oauth2: { loginUrl: config.loginUrl, clientId: app.clientId, clientSecret: app.clientSecret } } : {}),
    instanceUrl: session.instanceUrl,
    accessToken: session.accessToken,
    ...(session.refreshToken ? { refreshToken: session.refreshToken } : {}),
    version: SALESFORCE_VERSION,
  });
  const saving: Promise<void>[] = [];
  conn.on('refresh', (accessToken: string) => {
    saving.push(session.onRefresh(accessToken));
  });
  return { conn, saved: () => Promise.all(saving) };
}

interface SfError {
  name?: string;
  errorCode?: string;
  message?: string;
}

/** A client error as this service acts on it. */
function classify(err: unknown): Error {
  const e = err as SfError;
  const code = e?.errorCode ?? e?.name ?? '';
  const message = e?.message ?? String(err);
  if (code === 'REQUEST_LIMIT_EXCEEDED')
    return new RetryLater(ALLOWANCE_WAIT_MS, `Salesforce's daily API allowance is spent (${message})`);
  if (/^Unable to refresh session/.test(message) || code === 'INVALID_SESSION_ID' || code === 'invalid_grant')
    return new GrantRefused(`Salesforce refused the session (${message})`);
  if (/ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|socket hang up|fetch failed/.test(message))
    return new ProviderUnavailable(`Salesforce could not be reached: ${message}`);
  if (/^(SERVER_UNAVAILABLE|UNKNOWN_EXCEPTION|ERROR_HTTP_5\d\d)/.test(code))
    return new ProviderUnavailable(`Salesforce could not answer: ${message}`);
  return new Error(`Salesforce refused it: ${message}`);
}

const passOn = (err: Error): boolean =>
  err instanceof RetryLater || err instanceof GrantRefused || err instanceof ProviderUnavailable;

/** Exchanges an authorization code for a session at the org. */
export async function salesforceTokens(
  config: SalesforceConfig,
  app: ProviderApp,
  grant: { code: string; redirectUri: string },
): Promise<Tokens & { instanceUrl: string; externalId: string; externalName: string; scopes: string | null }> {
  try {
    const answer = await oauth2(config, app, grant.redirectUri).requestToken(grant.code);
    // `id` is <login>/id/<orgId>/<userId>.
    const [orgId] = new URL(answer.id).pathname.split('/').slice(-2);
    return {
      accessToken: answer.access_token,
      refreshToken: answer.refresh_token ?? null,
      expiresAt: null,
      instanceUrl: answer.instance_url,
      externalId: orgId ?? answer.id,
      externalName: new URL(answer.instance_url).host,
      scopes: (answer as { scope?: string }).scope ?? null,
    };
  } catch (err) {
    const classified = classify(err);
    if (classified instanceof ProviderUnavailable || classified instanceof GrantRefused) throw classified;
    throw new GrantRefused(classified.message);
  }
}

/** Revokes a refresh token (and the sessions it made) at Salesforce. */
export async function revokeSalesforce(config: SalesforceConfig, app: ProviderApp | undefined, token: string) {
  if (!app) return;
  try {
    await oauth2(config, app).revokeToken(token);
  } catch (err) {
    // invalid_token: already gone.
    if (/invalid_token/.test(String((err as Error)?.message ?? err) + String((err as SfError)?.name))) return;
    throw classify(err);
  }
}

/** The fields of an sObject the org has, and its External ID fields (what a destination is checked against). */
export async function describeSalesforce(
  config: SalesforceConfig,
  app: ProviderApp | undefined,
  session: SalesforceSession,
  sobject: 'Lead' | 'Contact',
) {
  const { conn, saved } = connect(config, app, session);
  try {
    const described = await conn.sobject(sobject).describe();
    await saved();
    return {
      fields: described.fields.filter((f) => f.createable).map((f) => f.name),
      externalIds: described.fields.filter((f) => f.externalId).map((f) => f.name),
    };
  } catch (err) {
    throw classify(err);
  }
}

/**
 * Records of a batch keyed by their external id, which is the person's email (lower case): the same
 * person delivered again updates their record. A row without an email is skipped, a repeated one after
 * its first.
 */
function keyed(rows: readonly MappedRow[], externalIdField: string) {
  const problems: BatchOutcome['problems'] = [];
  const byKey = new Map<string, MappedRow>();
  for (const row of rows) {
    const key = row.fields.Email?.trim().toLowerCase();
    if (!key) problems.push({ row: row.row, outcome: 'skipped', reason: 'no email to match a record by' });
    else if (byKey.has(key))
      problems.push({ row: row.row, outcome: 'skipped', reason: `the same email as row ${byKey.get(key)?.row}` });
    else byKey.set(key, { row: row.row, fields: { ...row.fields, [externalIdField]: key } });
  }
  return { problems, byKey };
}

/** How Salesforce words a record error for the log: its message, with its code. */
const reasonOf = (errors: { statusCode?: string; errorCode?: string; message: string }[] | undefined) =>
  errors?.map((e) => `${e.message} (${e.statusCode ?? e.errorCode})`).join('; ') || 'Salesforce did not take it';

/** Upserts up to 200 records with sObject Collections; each refused record fails alone. */
export async function upsertSalesforceRecords(
  config: SalesforceConfig,
  app: ProviderApp | undefined,
  session: SalesforceSession,
  target: { sobject: 'Lead' | 'Contact'; externalIdField: string },
  rows: readonly MappedRow[],
): Promise<BatchOutcome> {
  const { problems, byKey } = keyed(rows, target.externalIdField);
  if (byKey.size === 0) return { created: 0, updated: 0, problems };
  const { conn, saved } = connect(config, app, session);
  const ordered = [...byKey.values()];
  let results: { success: boolean; created?: boolean; errors?: { statusCode?: string; message: string }[] }[];
  try {
    results = (await conn.sobject(target.sobject).upsert(
      ordered.map((r) => r.fields),
      target.externalIdField,
      { allOrNone: false },
    )) as unknown as typeof results;
    await saved();
  } catch (err) {
    const classified = classify(err);
    if (passOn(classified)) throw classified;
    for (const row of ordered) problems.push({ row: row.row, outcome: 'failed', reason: classified.message });
    return { created: 0, updated: 0, problems };
  }
  let created = 0;
  let updated = 0;
  // One result per record, in the order sent.
  results.forEach((result, i) => {
    const row = ordered[i];
    if (!row) return;
    if (!result.success) problems.push({ row: row.row, outcome: 'failed', reason: reasonOf(result.errors) });
    else if (result.created) created++;
    else updated++;
  });
  return { created, updated, problems };
}

/** `CODE:message:fields --`, how the Bulk API writes a record error, in words. */
function bulkReason(error: string | undefined) {
  const match = /^([A-Z_]+):(.*):[^:]*--$/s.exec(error ?? '');
  return match ? `${match[2]} (${match[1]})` : error || 'Salesforce did not take it';
}

/**
 * Upserts a large batch through one Bulk API 2.0 ingest job: created, the CSV uploaded, closed, and
 * polled until Salesforce ends it; then its failed and unprocessed rows are read back and matched to
 * their rows by external id. A job Salesforce fails whole fails each of its rows with its reason.
 */
export async function bulkUpsertSalesforce(
  config: SalesforceConfig,
  app: ProviderApp | undefined,
  session: SalesforceSession,
  target: { sobject: 'Lead' | 'Contact'; externalIdField: string },
  rows: readonly MappedRow[],
  signal?: AbortSignal,
): Promise<BatchOutcome> {
  const { problems, byKey } = keyed(rows, target.externalIdField);
  if (byKey.size === 0) return { created: 0, updated: 0, problems };
  const ordered = [...byKey.values()];
  const columns = [...new Set(ordered.flatMap((r) => Object.keys(r.fields)))];
  // An empty cell leaves a field as it is in Salesforce.
  const csv = stringify(
    ordered.map((r) => columns.map((c) => r.fields[c] ?? '')),
    { header: true, columns, record_delimiter: 'unix' },
  );
  const { conn, saved } = connect(config, app, session);
  conn.bulk2.pollInterval = POLL_MS;
  const job = conn.bulk2.createJob({
    object: target.sobject,
    operation: 'upsert',
    externalIdFieldName: target.externalIdField,
    lineEnding: 'LF',
  });
  try {
    await job.open();
    await job.uploadData(csv);
    await job.close();
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const info = await job.check();
      if (info.state === 'JobComplete') break;
      if (info.state === 'Failed' || info.state === 'Aborted') {
        const reason = `Salesforce failed the bulk job: ${info.errorMessage ?? info.state}`;
        for (const row of ordered) problems.push({ row: row.row, outcome: 'failed', reason });
        await saved();
        return { created: 0, updated: 0, problems };
      }
      await new Promise((resolve) => setTimeout(resolve, conn.bulk2.pollInterval));
    }
    const results = await job.getAllResults();
    await saved();
    let created = 0;
    let updated = 0;
    const key = target.externalIdField;
    const rowOf = (record: Record<string, unknown>) => byKey.get(String(record[key] ?? '').toLowerCase());
    for (const record of results.successfulResults as Record<string, unknown>[]) {
      if (String(record.sf__Created) === 'true') created++;
      else updated++;
    }
    for (const record of results.failedResults as Record<string, unknown>[]) {
      const row = rowOf(record);
      if (row) problems.push({ row: row.row, outcome: 'failed', reason: bulkReason(String(record.sf__Error ?? '')) });
    }
    for (const record of results.unprocessedRecords as Record<string, unknown>[]) {
      const row = rowOf(record);
      if (row) problems.push({ row: row.row, outcome: 'failed', reason: 'Salesforce did not process it' });
    }
    return { created, updated, problems };
  } catch (err) {
    const classified = classify(err);
    if (passOn(classified)) throw classified;
    for (const row of ordered) problems.push({ row: row.row, outcome: 'failed', reason: classified.message });
    return { created: 0, updated: 0, problems };
  }
}
