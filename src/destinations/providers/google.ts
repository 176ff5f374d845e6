/**
 * Google Sheets through the official client (@googleapis/sheets and the google-auth-library it
 * bundles): the OAuth 2.0 web server flow (code exchange with offline access, refresh, token info,
 * revoke) or a service-account key, and rows appended to a sheet with `spreadsheets.values.append`
 * (RAW values, rows inserted), its header row written once. Sheets' per-minute quotas answer 429 with
 * no Retry-After: the delivery backs off exponentially, as Google's usage-limits page asks.
 */
import { auth, sheets } from '@googleapis/sheets';
import type { DestinationsConfig, ProviderApp } from '../../config/destinations.ts';
import type { Tokens } from './hubspot.ts';
import { type BatchOutcome, GrantRefused, type MappedRow, ProviderUnavailable, RetryLater } from './types.ts';

type GoogleConfig = DestinationsConfig['google'];

export const GOOGLE_SCOPES = ['https://www.googleapis.com/auth/spreadsheets', 'email'];
/** Rows appended a call (a request must stay under Sheets' 10 MB payload). */
export const SHEETS_BATCH = 500;
/** Google Sheets' limit on the characters of a cell. */
export const MAX_CELL = 50_000;
/** Where Google's service-account tokens are asked (gtoken posts there whatever the client is told). */
const GOOGLE_TOKEN_ORIGIN = 'https://oauth2.googleapis.com';

/** A service-account key as Google issues it (the JSON file). */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
}

const oauthClient = (config: GoogleConfig, app: ProviderApp, redirectUri?: string) =>
  new auth.OAuth2({
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    ...(redirectUri ? { redirectUri } : {}),
    endpoints: {
      oauth2AuthBaseUrl: config.authorizeUrl,
      oauth2TokenUrl: config.tokenUrl,
      oauth2RevokeUrl: config.revokeUrl,
      tokenInfoUrl: config.tokenInfoUrl,
    },
  });

/** A service account's client; its token requests go to the configured token endpoint. */
function serviceAccountClient(config: GoogleConfig, key: ServiceAccountKey) {
  const client = new auth.JWT({ email: key.client_email, key: key.private_key, scopes: [GOOGLE_SCOPES[0] ?? ''] });
  const tokenUrl = new URL(config.tokenUrl);
  if (tokenUrl.origin !== GOOGLE_TOKEN_ORIGIN)
    client.transporter.interceptors.request.add({
      resolved: async (request) => {
        const target = new URL(String(request.url));
        if (target.origin === GOOGLE_TOKEN_ORIGIN) request.url = new URL(tokenUrl.pathname, tokenUrl);
        return request;
      },
    });
  return client;
}

/** Reads a service-account key (the JSON Google issues), or says what is wrong with it. */
export function parseServiceAccountKey(text: string): ServiceAccountKey | string {
  let key: unknown;
  try {
    key = JSON.parse(text);
  } catch {
    return 'must be the service account’s key file (JSON) as Google issued it';
  }
  const k = key as Partial<ServiceAccountKey> & { type?: string };
  if (k?.type !== 'service_account' || typeof k.client_email !== 'string' || typeof k.private_key !== 'string')
    return 'must be a service account key (type service_account, with client_email and private_key)';
  return { client_email: k.client_email, private_key: k.private_key };
}

interface GaxiosLike {
  message?: string;
  code?: string | number;
  status?: number;
  response?: { status?: number; data?: { error?: unknown; error_description?: string } };
}

/** A client error as this service acts on it. */
function classify(err: unknown): Error {
  const e = err as GaxiosLike;
  const status = e?.response?.status ?? e?.status;
  const data = e?.response?.data;
  const rpc = typeof data?.error === 'object' ? (data.error as { message?: string; status?: string }) : undefined;
  const message =
    rpc?.message ?? data?.error_description ?? (typeof data?.error === 'string' ? data.error : e?.message);
  if (status === 429) return new RetryLater(-1, `Google Sheets asked to slow down (${message})`);
  if (status === 401 || data?.error === 'invalid_grant')
    return new GrantRefused(`Google refused the connection (${message})`);
  if (status === undefined || status >= 500) return new ProviderUnavailable(`Google could not be reached: ${message}`);
  return new Error(String(message ?? `Google answered ${status}`));
}

const passOn = (err: Error): boolean =>
  err instanceof RetryLater || err instanceof GrantRefused || err instanceof ProviderUnavailable;

/** Exchanges an authorization code (or a refresh token) for tokens. */
export async function googleTokens(
  config: GoogleConfig,
  app: ProviderApp,
  grant: { code: string; redirectUri: string } | { refreshToken: string },
): Promise<Tokens> {
  try {
    if ('code' in grant) {
      const { tokens } = await oauthClient(config, app, grant.redirectUri).getToken({
        code: grant.code,
        redirect_uri: grant.redirectUri,
      });
      if (!tokens.access_token) throw new GrantRefused('Google gave no token');
      return {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token ?? null,
        expiresAt: tokens.expiry_date ? new Date(tokens.expiry_date) : null,
      };
    }
    const client = oauthClient(config, app);
    client.setCredentials({ refresh_token: grant.refreshToken });
    const { token } = await client.getAccessToken();
    if (!token) throw new GrantRefused('Google gave no token');
    const expiry = client.credentials.expiry_date;
    return { accessToken: token, refreshToken: null, expiresAt: expiry ? new Date(expiry) : null };
  } catch (err) {
    if (err instanceof GrantRefused) throw err;
    const classified = classify(err);
    if (classified instanceof ProviderUnavailable || classified instanceof GrantRefused) throw classified;
    throw new GrantRefused(classified.message);
  }
}

/** The Google account a token belongs to. */
export async function googleWhoAmI(config: GoogleConfig, app: ProviderApp, accessToken: string) {
  try {
    const info = await oauthClient(config, app).getTokenInfo(accessToken);
    return {
      externalId: info.sub ?? info.email ?? null,
      externalName: info.email ?? null,
      scopes: info.scopes.join(' '),
    };
  } catch (err) {
    throw classify(err);
  }
}

/** Checks a service-account key: Google gives it a token. */
export async function checkServiceAccount(config: GoogleConfig, key: ServiceAccountKey) {
  try {
    await serviceAccountClient(config, key).authorize();
  } catch (err) {
    throw new GrantRefused(classify(err).message);
  }
}

export async function revokeGoogle(config: GoogleConfig, app: ProviderApp | undefined, token: string) {
  if (!app) return;
  try {
    await oauthClient(config, app).revokeToken(token);
  } catch (err) {
    // invalid_token: already revoked.
    if ((err as GaxiosLike)?.response?.status === 400) return;
    throw classify(err);
  }
}

/** Who writes: an OAuth access token, or a service account's key. */
export type SheetsCredential = { accessToken: string } | { serviceAccount: ServiceAccountKey };

function sheetsApi(config: GoogleConfig, credential: SheetsCredential) {
  if ('serviceAccount' in credential)
    return sheets({
      version: 'v4',
      rootUrl: config.sheetsRoot,
      auth: serviceAccountClient(config, credential.serviceAccount),
    });
  const client = new auth.OAuth2();
  client.setCredentials({ access_token: credential.accessToken });
  return sheets({ version: 'v4', rootUrl: config.sheetsRoot, auth: client });
}

/** A sheet title in A1 notation: quoted, an apostrophe doubled. */
export const sheetRange = (title: string, cells: string) => `'${title.replaceAll("'", "''")}'!${cells}`;

/**
 * The sheet rows go to (`sheet`, or the first): its title, its header row as it is (empty: none yet),
 * and its rows (the grid's: appending with INSERT_ROWS adds exactly the rows appended, which is how a
 * delivery cut short finds the rows it had appended before it could record them).
 */
export async function openSheet(
  config: GoogleConfig,
  credential: SheetsCredential,
  spreadsheetId: string,
  sheet: string | undefined,
): Promise<{ title: string; header: string[]; rowCount: number }> {
  const api = sheetsApi(config, credential);
  try {
    const book = await api.spreadsheets.get({
      spreadsheetId,
      fields: 'sheets.properties.title,sheets.properties.gridProperties.rowCount',
    });
    const found = (book.data.sheets ?? []).map((s) => s.properties ?? {});
    const chosen = sheet === undefined ? found[0] : found.find((p) => p.title === sheet);
    if (!chosen?.title)
      throw new SheetMissing(
        `the spreadsheet has no sheet named ${sheet ?? '(none)'}; it has ${found.map((p) => p.title).join(', ')}`,
      );
    const title = chosen.title;
    const first = await api.spreadsheets.values.get({ spreadsheetId, range: sheetRange(title, '1:1') });
    return {
      title,
      header: (first.data.values?.[0] ?? []).map(String),
      rowCount: chosen.gridProperties?.rowCount ?? 0,
    };
  } catch (err) {
    if (err instanceof SheetMissing) throw err;
    throw classify(err);
  }
}

/** The spreadsheet has no such sheet. */
export class SheetMissing extends Error {}

/**
 * Appends rows under a sheet's table, each row's values in `columns` order (RAW: as text, never a
 * formula). A row with a value longer than a cell holds fails alone; a refusal of the whole request
 * fails each row with its reason. Answers the outcome and how many rows were appended.
 */
export async function appendRows(
  config: GoogleConfig,
  credential: SheetsCredential,
  target: { spreadsheetId: string; title: string },
  columns: readonly string[],
  rows: readonly MappedRow[],
): Promise<BatchOutcome & { appended: number }> {
  const problems: BatchOutcome['problems'] = [];
  const sent = rows.filter((row) => {
    const long = columns.find((c) => (row.fields[c]?.length ?? 0) > MAX_CELL);
    if (long)
      problems.push({
        row: row.row,
        outcome: 'failed',
        reason: `${long} is longer than a cell holds (50,000 characters)`,
      });
    return !long;
  });
  if (sent.length === 0) return { created: 0, updated: 0, problems, appended: 0 };
  try {
    const answer = await sheetsApi(config, credential).spreadsheets.values.append({
      spreadsheetId: target.spreadsheetId,
      range: sheetRange(target.title, 'A1'),
      valueInputOption: 'RAW',
      insertDataOption: 'INSERT_ROWS',
      requestBody: { values: sent.map((row) => columns.map((c) => row.fields[c] ?? '')) },
    });
    const appended = answer.data.updates?.updatedRows ?? sent.length;
    return { created: appended, updated: 0, problems, appended };
  } catch (err) {
    const classified = classify(err);
    if (passOn(classified)) throw classified;
    for (const row of sent) problems.push({ row: row.row, outcome: 'failed', reason: classified.message });
    return { created: 0, updated: 0, problems, appended: 0 };
  }
}
