import { createHash, createPublicKey, randomBytes, randomInt, verify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local Google: the OAuth 2.0 endpoints and the part of the Sheets API v4 a destination needs, on one
 * server, for the official clients (`@googleapis/sheets` and the google-auth-library it bundles) to talk
 * to. Every rule is from a published reference; test/fixtures/google/SOURCES.md names each one and the
 * fixtures there hold the bodies the fake is checked against (test/fakes/google.test.ts).
 *
 * OAuth 2.0 (developers.google.com/identity/protocols/oauth2/web-server, …/service-account):
 * - `GET /o/oauth2/v2/auth` consents at once as `user` and redirects (302) to the `redirect_uri` with
 *   `code`, `state` and `scope`. An unknown `client_id` is Google's "Error 401: invalid_client" page, a
 *   `redirect_uri` the client did not register "Error 400: redirect_uri_mismatch", an unknown scope
 *   "Error 400: invalid_scope" (pages, not redirects, as Google shows them to the user). With `consent`
 *   set to 'deny' it redirects with `error=access_denied`. A refresh token is granted with
 *   `access_type=offline` on the first consent of a user to a client, and again only with `prompt=consent`
 *   (as Google behaves: later offline consents give no new refresh token; SOURCES.md).
 * - `POST /token` (form or JSON; client authenticated by `client_id`/`client_secret` in the body or HTTP
 *   Basic): `authorization_code` (one use, 10 minutes, same `redirect_uri`, PKCE `code_verifier` when the
 *   request had a `code_challenge`), `refresh_token`, and the service-account
 *   `urn:ietf:params:oauth:grant-type:jwt-bearer` grant, whose RS256 assertion is verified against the
 *   account's public key: `aud` must be `https://oauth2.googleapis.com/token`, `exp` at most an hour
 *   after `iat` and not past, `scope` known. Errors are `{error, error_description}` worded as Google
 *   words them (fixtures/google/oauth.json). Access tokens last `accessTokenLifetime` seconds (3599).
 * - `POST /revoke?token=` (or `token` in the form): an access token revokes its grant's refresh token too,
 *   a refresh token every access token of its grant; an unknown or revoked token is 400 `invalid_token`.
 * - `GET /tokeninfo?access_token=` (or the token as a bearer header, as google-auth-library's `getTokenInfo`
 *   posts it): the token's `azp`, `aud`, `scope`, `exp`, `expires_in`, `email`.
 *
 * Sheets v4 (developers.google.com/workspace/sheets/api/reference/rest): `GET /v4/spreadsheets/:id`
 * (properties and sheets, honouring `fields`), `GET /v4/spreadsheets/:id/values/:range` and
 * `POST /v4/spreadsheets/:id/values/:range:append` with `valueInputOption` (required: RAW or
 * USER_ENTERED) and `insertDataOption` (INSERT_ROWS or OVERWRITE). Ranges are A1 notation with sheet
 * names, quoted (`'Q1 Leads'!A1:D1`, `''` for an apostrophe) or not, whole sheets, columns (`A:D`) and
 * rows (`1:2`); an unknown sheet is 400 "Unable to parse range: …". Append finds the table the range
 * starts (the contiguous rows holding data from the range's first row, widened to contiguous columns),
 * writes after its last row from its first column, answers `tableRange` (absent when there is no table)
 * and `updates`, and grows the grid as Sheets does (INSERT_ROWS inserts rows; both add rows or columns
 * past the end). Errors are google.rpc.Status bodies (`{error:{code,message,status,details?}}`, no
 * `errors[]`): 401 UNAUTHENTICATED (missing, expired with ACCESS_TOKEN_EXPIRED, revoked or unknown
 * token), 403 PERMISSION_DENIED (a token without a Sheets scope: ACCESS_TOKEN_SCOPE_INSUFFICIENT; a
 * spreadsheet not shared with the caller: "The caller does not have permission"), 404 NOT_FOUND, 400
 * INVALID_ARGUMENT (a cell over 50,000 characters, a missing `valueInputOption`), and 429
 * RESOURCE_EXHAUSTED when a per-minute quota is spent: write or read requests, per user (60) and per
 * project (300), over a sliding minute, with no Retry-After header (fixtures/google/sheets-errors.json).
 *
 * Not modelled: formula evaluation (USER_ENTERED keeps `=…` as a formula and answers it as written),
 * number formats and dates, named ranges, `includeGridData`, self-signed service-account JWTs used as
 * bearer tokens, ID tokens.
 */

export const TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
export const SCOPES = {
  spreadsheets: 'https://www.googleapis.com/auth/spreadsheets',
  spreadsheetsReadonly: 'https://www.googleapis.com/auth/spreadsheets.readonly',
  drive: 'https://www.googleapis.com/auth/drive',
  driveFile: 'https://www.googleapis.com/auth/drive.file',
  driveReadonly: 'https://www.googleapis.com/auth/drive.readonly',
} as const;
const IDENTITY_SCOPES = [
  'openid',
  'email',
  'profile',
  'https://www.googleapis.com/auth/userinfo.email',
  'https://www.googleapis.com/auth/userinfo.profile',
];
const KNOWN_SCOPES = new Set<string>([...Object.values(SCOPES), ...IDENTITY_SCOPES]);
/** Scopes that let a token call a method (the reference's "Authorization scopes" of each method). */
const READ_SCOPES = new Set<string>(Object.values(SCOPES));
const WRITE_SCOPES = new Set<string>([SCOPES.spreadsheets, SCOPES.drive, SCOPES.driveFile]);

export interface GoogleClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

export interface ServiceAccount {
  email: string;
  /** PEM (SPKI or certificate) or a KeyObject: what verifies the account's RS256 assertions. */
  publicKey: string | KeyObject;
}

export interface FakeGoogleOptions {
  /** OAuth clients; one is made when none is given (its first redirect URI is `<url>/callback`). */
  clients?: GoogleClient[];
  serviceAccounts?: ServiceAccount[];
  /** The Google account that consents at the authorization endpoint. */
  user?: string;
  /** Seconds an access token lasts (Google: 3599). */
  accessTokenLifetime?: number;
  /** Per-minute quotas (the Sheets "Usage limits" page: 60 per user, 300 per project, reads and writes). */
  writeQuotaPerUser?: number;
  writeQuotaPerProject?: number;
  readQuotaPerUser?: number;
  readQuotaPerProject?: number;
  /** The project number the quota errors name. */
  projectNumber?: string;
}

type Cell = string | number | boolean | { formula: string };

export interface FakeSheet {
  sheetId: number;
  title: string;
  rowCount: number;
  columnCount: number;
  /** Rows of cells, 0-based; holes are empty cells. */
  cells: (Cell | undefined)[][];
}

export interface FakeSpreadsheet {
  spreadsheetId: string;
  title: string;
  sheets: FakeSheet[];
  /** Who may read and write it (Google accounts and service-account emails). */
  editors: Set<string>;
}

interface AccessToken {
  token: string;
  principal: string;
  clientId: string;
  scopes: string[];
  expiresAt: number;
  revoked: boolean;
  grant: string | null;
}

interface RefreshToken {
  token: string;
  principal: string;
  clientId: string;
  scopes: string[];
  revoked: boolean;
  grant: string;
}

interface AuthCode {
  code: string;
  clientId: string;
  redirectUri: string;
  principal: string;
  scopes: string[];
  offline: boolean;
  codeChallenge: string | null;
  codeChallengeMethod: string;
  expiresAt: number;
  used: boolean;
}

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Who the bearer token belongs to, for API calls. */
  principal: string | null;
  status: number;
}

export interface FakeGoogle {
  url: string;
  /** For `new auth.OAuth2({ endpoints })` (google-auth-library's `OAuth2ClientEndpoints`). */
  endpoints: { oauth2AuthBaseUrl: string; oauth2TokenUrl: string; oauth2RevokeUrl: string; tokenInfoUrl: string };
  /** For `sheets({ version: 'v4', rootUrl })`. */
  rootUrl: string;
  /** The first OAuth client. */
  client: GoogleClient;
  clients: Map<string, GoogleClient>;
  user: string;
  spreadsheets: Map<string, FakeSpreadsheet>;
  requests: LoggedRequest[];
  /** 'grant' (default) or 'deny': what the user answers at the consent screen. */
  consent: 'grant' | 'deny';
  /** Scopes the user leaves ticked (Google's granular consent); all of them by default. */
  grantScopes: ((requested: string[]) => string[]) | null;
  addServiceAccount(account: ServiceAccount): void;
  /** A spreadsheet shared with `editors` (the consenting user by default), with sheets titled `sheets`. */
  addSpreadsheet(init?: { title?: string; sheets?: string[]; editors?: string[]; id?: string }): FakeSpreadsheet;
  share(spreadsheetId: string, principal: string): void;
  /** A sheet's values as `values.get` would answer them with FORMATTED_VALUE (rows trimmed). */
  sheetValues(spreadsheetId: string, title: string): string[][];
  /** The next `count` requests of `kind` answer 429 RESOURCE_EXHAUSTED (per-user quota), as if spent. */
  exhaustQuota(count?: number, kind?: 'write' | 'read'): void;
  /** Every access token issued so far expires now (Google still knows them: 401 ACCESS_TOKEN_EXPIRED). */
  expireAccessTokens(): void;
  /** Whether a token (access or refresh) has been revoked. */
  isRevoked(token: string): boolean;
  close(): Promise<void>;
}

class GoogleError {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

const random = (bytes: number) => randomBytes(bytes).toString('base64url');
const b64urlJson = (part: string): unknown => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

const rpcError = (code: number, status: string, message: string, details?: unknown[]) =>
  new GoogleError(code, { error: { code, message, status, ...(details ? { details } : {}) } });
const oauthError = (status: number, error: string, description: string) =>
  new GoogleError(status, { error, error_description: description });
const invalidArgument = (message: string) => rpcError(400, 'INVALID_ARGUMENT', message);
const errorInfo = (reason: string, method: string) => ({
  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
  reason,
  domain: 'googleapis.com',
  metadata: { method: `google.apps.sheets.v4.SpreadsheetsService.${method}`, service: 'sheets.googleapis.com' },
});

const INVALID_CREDENTIALS =
  'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';
const MISSING_CREDENTIALS =
  'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';
const JWT_TIMEFRAME =
  'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.';
const MAX_CELL_CHARACTERS = 50_000;

// ---------------------------------------------------------------------------------------------------
// A1 notation

/** 0-based column index of letters (A = 0, AA = 26). */
function columnIndex(letters: string): number {
  let index = 0;
  for (const char of letters.toUpperCase()) index = index * 26 + (char.charCodeAt(0) - 64);
  return index - 1;
}

export function columnLetters(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

/** A sheet title as A1 notation writes it: bare when it is a plain identifier, else quoted. */
export function quoteTitle(title: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(title) && !/^[A-Za-z]{1,3}[0-9]+$/.test(title)
    ? title
    : `'${title.replaceAll("'", "''")}'`;
}

interface GridRange {
  sheet: FakeSheet;
  /** Inclusive 0-based bounds; undefined is open (to the grid's edge). */
  startRow: number | undefined;
  endRow: number | undefined;
  startCol: number | undefined;
  endCol: number | undefined;
}

interface CellRef {
  col: number | undefined;
  row: number | undefined;
}

function parseCellRef(ref: string): CellRef | null {
  const match = /^\$?([A-Za-z]{0,3})\$?([0-9]*)$/.exec(ref);
  if (!match || (match[1] === '' && match[2] === '')) return null;
  const row = match[2] ? Number(match[2]) - 1 : undefined;
  if (row !== undefined && row < 0) return null;
  return { col: match[1] ? columnIndex(match[1]) : undefined, row };
}

/** A1 notation → a range of a sheet; null when Sheets could not parse it. */
export function parseA1(a1: string, book: FakeSpreadsheet): GridRange | null {
  let title: string | null = null;
  let cells: string | null;
  if (a1.startsWith("'")) {
    let i = 1;
    let name = '';
    for (; i < a1.length; i++) {
      if (a1[i] === "'") {
        if (a1[i + 1] === "'") {
          name += "'";
          i++;
          continue;
        }
        break;
      }
      name += a1[i];
    }
    if (i >= a1.length) return null;
    title = name;
    const rest = a1.slice(i + 1);
    if (rest === '') cells = null;
    else if (rest.startsWith('!')) cells = rest.slice(1);
    else return null;
  } else if (a1.includes('!')) {
    const bang = a1.indexOf('!');
    title = a1.slice(0, bang);
    cells = a1.slice(bang + 1);
  } else {
    // No sheet name: cells of the first sheet when it reads as cells (`A1`, `A1:D5`, `A:D`, `1:2`), else
    // a sheet's title (so a sheet titled like a cell must be quoted).
    const looksLikeCells =
      /^(\$?[A-Za-z]{1,3}\$?\d+(:\$?[A-Za-z]{1,3}\$?\d*)?|\$?[A-Za-z]{1,3}:\$?[A-Za-z]{1,3}|\d+:\d+)$/.test(a1);
    if (looksLikeCells) {
      cells = a1;
    } else {
      title = a1;
      cells = null;
    }
  }
  const sheet = title === null ? book.sheets[0] : book.sheets.find((s) => s.title === title);
  if (!sheet) return null;
  if (cells === '') return null;
  if (cells === null) return { sheet, startRow: undefined, endRow: undefined, startCol: undefined, endCol: undefined };
  const parts = cells.split(':');
  if (parts.length > 2) return null;
  const start = parseCellRef(parts[0]!);
  const end = parts.length === 2 ? parseCellRef(parts[1]!) : start;
  if (!start || !end) return null;
  if (parts.length === 1 && (start.col === undefined || start.row === undefined)) return null;
  // `A:B` are whole columns and `1:2` whole rows; `A5:A` runs from row 5 down.
  return {
    sheet,
    startRow: start.row ?? (end.row === undefined ? undefined : 0),
    endRow: end.row,
    startCol: start.col ?? (end.col === undefined ? undefined : 0),
    endCol: end.col,
  };
}

function formatRange(sheet: FakeSheet, r1: number, c1: number, r2: number, c2: number): string {
  const start = `${columnLetters(c1)}${r1 + 1}`;
  const end = `${columnLetters(c2)}${r2 + 1}`;
  return `${quoteTitle(sheet.title)}!${start === end ? start : `${start}:${end}`}`;
}

// ---------------------------------------------------------------------------------------------------
// Cells

function isEmpty(cell: Cell | undefined): boolean {
  return cell === undefined || cell === '';
}

function formatted(cell: Cell | undefined, render: string): string | number | boolean {
  if (cell === undefined) return '';
  if (typeof cell === 'object') return cell.formula;
  if (render === 'FORMATTED_VALUE') {
    if (typeof cell === 'boolean') return cell ? 'TRUE' : 'FALSE';
    return String(cell);
  }
  return cell;
}

/** What a cell holds once Sheets has read the input as `valueInputOption` says. */
function enter(value: string | number | boolean, option: string): Cell {
  if (option === 'RAW' || typeof value !== 'string') return value;
  if (value.startsWith("'")) return value.slice(1);
  if (value.startsWith('=') && value.length > 1) return { formula: value };
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(value.trim())) return Number(value);
  if (/^(true|false)$/i.test(value.trim())) return value.trim().toUpperCase() === 'TRUE';
  return value;
}

// ---------------------------------------------------------------------------------------------------
// `fields` partial responses (`a,b.c,d(e,f)`)

type FieldTree = Map<string, FieldTree>;

function parseFields(spec: string): FieldTree {
  let i = 0;
  const parseList = (): FieldTree => {
    const tree: FieldTree = new Map();
    while (i < spec.length && spec[i] !== ')') {
      let name = '';
      while (i < spec.length && !',()'.includes(spec[i]!)) name += spec[i++];
      const path = name.trim().split(/[./]/);
      let node = tree;
      for (const part of path) {
        if (!node.has(part)) node.set(part, new Map());
        node = node.get(part)!;
      }
      if (spec[i] === '(') {
        i++;
        for (const [key, sub] of parseList()) node.set(key, sub);
        i++;
      }
      if (spec[i] === ',') i++;
    }
    return tree;
  };
  return parseList();
}

function pick(value: unknown, tree: FieldTree): unknown {
  if (tree.size === 0 || tree.has('*')) return value;
  if (Array.isArray(value)) return value.map((item) => pick(item, tree));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of tree) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = pick(v, sub);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------

export async function startFakeGoogle(options: FakeGoogleOptions = {}): Promise<FakeGoogle> {
  const lifetime = options.accessTokenLifetime ?? 3599;
  const project = options.projectNumber ?? '123456789012';
  const quotas = {
    write: { user: options.writeQuotaPerUser ?? 60, project: options.writeQuotaPerProject ?? 300 },
    read: { user: options.readQuotaPerUser ?? 60, project: options.readQuotaPerProject ?? 300 },
  };
  const clients = new Map<string, GoogleClient>();
  const serviceAccounts = new Map<string, KeyObject>();
  const codes = new Map<string, AuthCode>();
  const accessTokens = new Map<string, AccessToken>();
  const refreshTokens = new Map<string, RefreshToken>();
  /** Users who gave a client offline access: later consents give no refresh token without prompt=consent. */
  const offlineGrants = new Set<string>();
  /** Request times inside the current minute, per quota bucket. */
  const windows = new Map<string, number[]>();
  const forced = { write: 0, read: 0 };
  const requests: LoggedRequest[] = [];

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify({ error: { code: 500, message: String(err), status: 'INTERNAL' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  for (const client of options.clients ?? [
    {
      clientId: `${project}-${random(12)
        .toLowerCase()
        .replace(/[^a-z0-9]/g, 'x')}.apps.googleusercontent.com`,
      clientSecret: `GOCSPX-${random(21)}`,
      redirectUris: [`${url}/callback`],
    },
  ]) {
    clients.set(client.clientId, client);
  }
  const addServiceAccount = (account: ServiceAccount) => {
    serviceAccounts.set(
      account.email,
      typeof account.publicKey === 'string' ? createPublicKey(account.publicKey) : account.publicKey,
    );
  };
  for (const account of options.serviceAccounts ?? []) addServiceAccount(account);

  const spreadsheets = new Map<string, FakeSpreadsheet>();
  const user = options.user ?? 'lead.owner@example.com';

  function issueAccessToken(principal: string, clientId: string, scopes: string[], grant: string | null) {
    const token: AccessToken = {
      token: `ya29.${random(120)}`,
      principal,
      clientId,
      scopes,
      expiresAt: Date.now() + lifetime * 1000,
      revoked: false,
      grant,
    };
    accessTokens.set(token.token, token);
    return token;
  }

  // -------------------------------------------------------------------------------------------------
  // OAuth

  function authorize(query: URLSearchParams, res: ServerResponse) {
    const page = (status: number, error: string, description: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>Error ${status}: ${error}</title><h1>Access blocked: authorization error</h1><p id="errorCode">Error ${status}: ${error}</p><p id="errorDescription">${description}</p>`,
      );
    };
    const client = clients.get(query.get('client_id') ?? '');
    if (!client) return page(401, 'invalid_client', 'The OAuth client was not found.');
    const redirectUri = query.get('redirect_uri') ?? '';
    if (!client.redirectUris.includes(redirectUri)) {
      return page(
        400,
        'redirect_uri_mismatch',
        `You can't sign in to this app because it doesn't comply with Google's OAuth 2.0 policy. If you're the app developer, register the redirect URI in the Google Cloud Console. Request details: redirect_uri=${redirectUri}`,
      );
    }
    if (query.get('response_type') !== 'code') return page(400, 'unsupported_response_type', 'Invalid response_type.');
    const scope = query.get('scope');
    if (!scope) return page(400, 'invalid_request', 'Missing required parameter: scope');
    const requested = scope.split(/\s+/).filter(Boolean);
    const unknown = requested.filter((s) => !KNOWN_SCOPES.has(s));
    if (unknown.length > 0)
      return page(400, 'invalid_scope', `Some requested scopes were invalid. {invalid=[${unknown.join(', ')}]}`);
    const target = new URL(redirectUri);
    const state = query.get('state');
    if (fake.consent === 'deny') {
      target.searchParams.set('error', 'access_denied');
      if (state !== null) target.searchParams.set('state', state);
      res.writeHead(302, { location: target.toString() });
      return res.end();
    }
    const granted = fake.grantScopes ? fake.grantScopes(requested) : requested;
    const principal = query.get('login_hint') || user;
    const grantKey = `${client.clientId} ${principal}`;
    const offline =
      query.get('access_type') === 'offline' &&
      (!offlineGrants.has(grantKey) || (query.get('prompt') ?? '').split(' ').includes('consent'));
    if (query.get('access_type') === 'offline') offlineGrants.add(grantKey);
    const code: AuthCode = {
      code: `4/0A${random(60)}`,
      clientId: client.clientId,
      redirectUri,
      principal,
      scopes: granted,
      offline,
      codeChallenge: query.get('code_challenge'),
      codeChallengeMethod: query.get('code_challenge_method') ?? 'plain',
      expiresAt: Date.now() + 10 * 60_000,
      used: false,
    };
    codes.set(code.code, code);
    if (state !== null) target.searchParams.set('state', state);
    target.searchParams.set('code', code.code);
    target.searchParams.set('scope', granted.join(' '));
    res.writeHead(302, { location: target.toString() });
    res.end();
  }

  function authenticateClient(params: Record<string, string>, authorization: string | undefined): GoogleClient {
    let clientId = params.client_id;
    let secret = params.client_secret;
    if (authorization?.startsWith('Basic ')) {
      const [id, pass] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':');
      clientId = decodeURIComponent(id ?? '');
      secret = decodeURIComponent(pass ?? '');
    }
    const client = clients.get(clientId ?? '');
    if (!client) throw oauthError(401, 'invalid_client', 'The OAuth client was not found.');
    if (client.clientSecret !== secret) throw oauthError(401, 'invalid_client', 'Unauthorized');
    return client;
  }

  function tokenEndpoint(params: Record<string, string>, authorization: string | undefined) {
    const grantType = params.grant_type;
    if (!grantType) throw oauthError(400, 'unsupported_grant_type', 'Invalid grant_type: ');
    if (grantType === 'urn:ietf:params:oauth:grant-type:jwt-bearer') return jwtBearer(params.assertion);
    if (grantType === 'authorization_code') {
      const client = authenticateClient(params, authorization);
      if (!params.code) throw oauthError(400, 'invalid_request', 'Missing required parameter: code');
      const code = codes.get(params.code);
      if (!code || code.used || code.expiresAt < Date.now() || code.clientId !== client.clientId) {
        throw oauthError(400, 'invalid_grant', 'Bad Request');
      }
      if (params.redirect_uri !== code.redirectUri) throw oauthError(400, 'redirect_uri_mismatch', 'Bad Request');
      if (code.codeChallenge !== null) {
        if (!params.code_verifier) throw oauthError(400, 'invalid_grant', 'Missing code verifier.');
        const computed =
          code.codeChallengeMethod === 'S256'
            ? createHash('sha256').update(params.code_verifier).digest('base64url')
            : params.code_verifier;
        if (computed !== code.codeChallenge) throw oauthError(400, 'invalid_grant', 'Invalid code verifier.');
      }
      code.used = true;
      const grant = random(9);
      let refresh: RefreshToken | null = null;
      if (code.offline) {
        refresh = {
          token: `1//0${random(72)}`,
          principal: code.principal,
          clientId: client.clientId,
          scopes: code.scopes,
          revoked: false,
          grant,
        };
        refreshTokens.set(refresh.token, refresh);
      }
      const access = issueAccessToken(code.principal, client.clientId, code.scopes, grant);
      return {
        access_token: access.token,
        expires_in: lifetime,
        ...(refresh ? { refresh_token: refresh.token } : {}),
        scope: code.scopes.join(' '),
        token_type: 'Bearer',
      };
    }
    if (grantType === 'refresh_token') {
      const client = authenticateClient(params, authorization);
      if (!params.refresh_token) throw oauthError(400, 'invalid_request', 'Missing required parameter: refresh_token');
      const refresh = refreshTokens.get(params.refresh_token);
      if (!refresh || refresh.clientId !== client.clientId) throw oauthError(400, 'invalid_grant', 'Bad Request');
      if (refresh.revoked) throw oauthError(400, 'invalid_grant', 'Token has been expired or revoked.');
      const access = issueAccessToken(refresh.principal, client.clientId, refresh.scopes, refresh.grant);
      return {
        access_token: access.token,
        expires_in: lifetime,
        scope: refresh.scopes.join(' '),
        token_type: 'Bearer',
      };
    }
    throw oauthError(400, 'unsupported_grant_type', `Invalid grant_type: ${grantType}`);
  }

  /** The service-account grant (RFC 7523) as Google's server-to-server guide describes it. */
  function jwtBearer(assertion: string | undefined) {
    if (!assertion) throw oauthError(400, 'invalid_request', 'Missing required parameter: assertion');
    const parts = assertion.split('.');
    let header: { alg?: string };
    let claims: { iss?: string; scope?: string; aud?: string; exp?: number; iat?: number; sub?: string };
    try {
      if (parts.length !== 3) throw new Error('not a JWS');
      header = b64urlJson(parts[0]!) as typeof header;
      claims = b64urlJson(parts[1]!) as typeof claims;
    } catch {
      throw oauthError(400, 'invalid_grant', 'Invalid JWT Signature.');
    }
    if (!claims.iss) throw oauthError(400, 'invalid_grant', 'Invalid email or User ID.');
    const key = serviceAccounts.get(claims.iss);
    if (!key) throw oauthError(400, 'invalid_grant', 'Invalid grant: account not found');
    const signed = verify(
      'RSA-SHA256',
      Buffer.from(`${parts[0]}.${parts[1]}`),
      key,
      Buffer.from(parts[2]!, 'base64url'),
    );
    if (header.alg !== 'RS256' || !signed) throw oauthError(400, 'invalid_grant', 'Invalid JWT Signature.');
    if (claims.aud !== TOKEN_AUDIENCE) throw oauthError(400, 'invalid_grant', 'Invalid JWT: Failed audience check.');
    const now = Math.floor(Date.now() / 1000);
    const { iat, exp } = claims;
    if (
      typeof iat !== 'number' ||
      typeof exp !== 'number' ||
      exp - iat > 3600 ||
      exp <= now ||
      iat > now + 300 ||
      exp < iat
    ) {
      throw oauthError(400, 'invalid_grant', JWT_TIMEFRAME);
    }
    const scopes = (claims.scope ?? '').split(/\s+/).filter(Boolean);
    if (scopes.length === 0 || scopes.some((s) => !KNOWN_SCOPES.has(s))) {
      throw oauthError(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    }
    const access = issueAccessToken(claims.sub ?? claims.iss, claims.iss, scopes, null);
    return { access_token: access.token, expires_in: lifetime, token_type: 'Bearer' };
  }

  function revoke(token: string | undefined) {
    const access = accessTokens.get(token ?? '');
    const refresh = refreshTokens.get(token ?? '');
    const live = (access && !access.revoked && access.expiresAt > Date.now()) || (refresh && !refresh.revoked);
    if (!live) throw oauthError(400, 'invalid_token', 'Token expired or revoked');
    const grant = access?.grant ?? refresh?.grant ?? null;
    if (access) access.revoked = true;
    if (refresh) refresh.revoked = true;
    if (grant !== null) {
      for (const t of accessTokens.values()) if (t.grant === grant) t.revoked = true;
      for (const t of refreshTokens.values()) if (t.grant === grant) t.revoked = true;
    }
    return {};
  }

  function tokenInfo(token: string | undefined) {
    const access = accessTokens.get(token ?? '');
    if (!access || access.revoked || access.expiresAt <= Date.now()) {
      throw oauthError(400, 'invalid_token', 'Invalid Value');
    }
    return {
      azp: access.clientId,
      aud: access.clientId,
      scope: access.scopes.join(' '),
      exp: String(Math.floor(access.expiresAt / 1000)),
      expires_in: Math.floor((access.expiresAt - Date.now()) / 1000),
      email: access.principal,
      email_verified: 'true',
      access_type:
        access.grant && [...refreshTokens.values()].some((r) => r.grant === access.grant) ? 'offline' : 'online',
    };
  }

  // -------------------------------------------------------------------------------------------------
  // Sheets

  function bearer(req: IncomingMessage, method: string): AccessToken {
    const header = req.headers.authorization;
    if (!header)
      throw rpcError(401, 'UNAUTHENTICATED', MISSING_CREDENTIALS, [errorInfo('CREDENTIALS_MISSING', method)]);
    const match = /^Bearer (.+)$/i.exec(header);
    const token = match ? accessTokens.get(match[1]!.trim()) : undefined;
    const challenge = { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' };
    if (!token || token.revoked) {
      throw new GoogleError(
        401,
        { error: { code: 401, message: INVALID_CREDENTIALS, status: 'UNAUTHENTICATED' } },
        challenge,
      );
    }
    if (token.expiresAt <= Date.now()) {
      const body = rpcError(401, 'UNAUTHENTICATED', INVALID_CREDENTIALS, [
        errorInfo('ACCESS_TOKEN_EXPIRED', method),
      ]).body;
      throw new GoogleError(401, body, challenge);
    }
    return token;
  }

  function quotaError(kind: 'write' | 'read', scope: 'user' | 'project') {
    const metric = kind === 'write' ? 'Write requests' : 'Read requests';
    const Kind = kind === 'write' ? 'Write' : 'Read';
    const perUser = scope === 'user';
    const metadata = perUser
      ? {
          quota_limit_value: String(quotas[kind].user),
          service: 'sheets.googleapis.com',
          quota_unit: '1/min/{project}/{user}',
          quota_limit: `${Kind}RequestsPerMinutePerUser`,
          consumer: `projects/${project}`,
          quota_metric: `sheets.googleapis.com/${kind}_requests`,
          quota_location: 'global',
        }
      : {
          quota_limit: `${Kind}RequestsPerMinutePerProject`,
          quota_unit: '1/min/{project}',
          quota_location: 'global',
          quota_limit_value: String(quotas[kind].project),
          consumer: `projects/${project}`,
          service: 'sheets.googleapis.com',
          quota_metric: `sheets.googleapis.com/${kind}_requests`,
        };
    return rpcError(
      429,
      'RESOURCE_EXHAUSTED',
      `Quota exceeded for quota metric '${metric}' and limit '${metric} per minute${perUser ? ' per user' : ''}' of service 'sheets.googleapis.com' for consumer 'project_number:${project}'.`,
      [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'RATE_LIMIT_EXCEEDED',
          domain: 'googleapis.com',
          metadata,
        },
        {
          '@type': 'type.googleapis.com/google.rpc.Help',
          links: [
            {
              description: 'Request a higher quota limit.',
              url: 'https://cloud.google.com/docs/quotas/help/request_increase',
            },
          ],
        },
      ],
    );
  }

  /** Counts a request against the per-minute quotas, or refuses it 429 when one is spent. */
  function spend(kind: 'write' | 'read', principal: string) {
    if (forced[kind] > 0) {
      forced[kind]--;
      throw quotaError(kind, 'user');
    }
    const now = Date.now();
    const live = (key: string) => {
      const times = (windows.get(key) ?? []).filter((t) => t > now - 60_000);
      windows.set(key, times);
      return times;
    };
    const perUser = live(`${kind} user ${principal}`);
    const perProject = live(`${kind} project`);
    if (perUser.length >= quotas[kind].user) throw quotaError(kind, 'user');
    if (perProject.length >= quotas[kind].project) throw quotaError(kind, 'project');
    perUser.push(now);
    perProject.push(now);
  }

  function spreadsheetFor(id: string, token: AccessToken, method: string, write: boolean) {
    const allowed = write ? WRITE_SCOPES : READ_SCOPES;
    if (!token.scopes.some((s) => allowed.has(s))) {
      throw rpcError(403, 'PERMISSION_DENIED', 'Request had insufficient authentication scopes.', [
        errorInfo('ACCESS_TOKEN_SCOPE_INSUFFICIENT', method),
      ]);
    }
    spend(write ? 'write' : 'read', token.principal);
    const book = spreadsheets.get(id);
    if (!book) throw rpcError(404, 'NOT_FOUND', 'Requested entity was not found.');
    if (!book.editors.has(token.principal)) {
      throw rpcError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
    }
    return book;
  }

  function spreadsheetResource(book: FakeSpreadsheet) {
    return {
      spreadsheetId: book.spreadsheetId,
      properties: { title: book.title, locale: 'en_US', autoRecalc: 'ON_CHANGE', timeZone: 'Etc/GMT' },
      sheets: book.sheets.map((sheet, index) => ({
        properties: {
          sheetId: sheet.sheetId,
          title: sheet.title,
          index,
          sheetType: 'GRID',
          gridProperties: { rowCount: sheet.rowCount, columnCount: sheet.columnCount },
        },
      })),
      spreadsheetUrl: `https://docs.google.com/spreadsheets/d/${book.spreadsheetId}/edit`,
    };
  }

  function rangeOf(book: FakeSpreadsheet, a1: string): GridRange {
    const range = parseA1(a1, book);
    if (!range) throw invalidArgument(`Unable to parse range: ${a1}`);
    return range;
  }

  function getValues(book: FakeSpreadsheet, a1: string, query: URLSearchParams) {
    const range = rangeOf(book, a1);
    const { sheet } = range;
    const r1 = range.startRow ?? 0;
    const c1 = range.startCol ?? 0;
    const r2 = Math.min(range.endRow ?? sheet.rowCount - 1, sheet.rowCount - 1);
    const c2 = Math.min(range.endCol ?? sheet.columnCount - 1, sheet.columnCount - 1);
    if (r1 >= sheet.rowCount || c1 >= sheet.columnCount) {
      throw invalidArgument(
        `Range (${a1}) exceeds grid limits. Max rows: ${sheet.rowCount}, max columns: ${sheet.columnCount}`,
      );
    }
    const render = query.get('valueRenderOption') ?? 'FORMATTED_VALUE';
    const columns = query.get('majorDimension') === 'COLUMNS';
    let rows: (string | number | boolean)[][] = [];
    for (let r = r1; r <= r2; r++) {
      const row: (string | number | boolean)[] = [];
      for (let c = c1; c <= c2; c++) row.push(formatted(sheet.cells[r]?.[c], render));
      rows.push(row);
    }
    if (columns) rows = (rows[0] ?? []).map((_, c) => rows.map((row) => row[c] ?? ''));
    // Trailing empty cells and rows are left out, as Sheets leaves them out.
    const trimmed = rows.map((row) => {
      let end = row.length;
      while (end > 0 && row[end - 1] === '') end--;
      return row.slice(0, end);
    });
    while (trimmed.length > 0 && trimmed[trimmed.length - 1]!.length === 0) trimmed.pop();
    return {
      range: formatRange(sheet, r1, c1, r2, c2),
      majorDimension: columns ? 'COLUMNS' : 'ROWS',
      ...(trimmed.length > 0 ? { values: trimmed } : {}),
    };
  }

  function rowHasData(sheet: FakeSheet, row: number, c1: number, c2: number) {
    const cells = sheet.cells[row];
    if (!cells) return false;
    for (let c = c1; c <= c2; c++) if (!isEmpty(cells[c])) return true;
    return false;
  }

  function appendValues(book: FakeSpreadsheet, a1: string, query: URLSearchParams, body: unknown) {
    const option = query.get('valueInputOption');
    if (!option) throw invalidArgument("'valueInputOption' is required but not specified");
    if (option !== 'RAW' && option !== 'USER_ENTERED') {
      throw invalidArgument(
        `Invalid value at 'value_input_option' (type.googleapis.com/google.apps.sheets.v4.ValueInputOption), "${option}"`,
      );
    }
    const insert = query.get('insertDataOption') ?? 'OVERWRITE';
    if (insert !== 'OVERWRITE' && insert !== 'INSERT_ROWS') {
      throw invalidArgument(
        `Invalid value at 'insert_data_option' (type.googleapis.com/google.apps.sheets.v4.AppendValuesRequest.InsertDataOption), "${insert}"`,
      );
    }
    const range = rangeOf(book, a1);
    const input = (body ?? {}) as { values?: unknown; majorDimension?: string; range?: string };
    if (input.values !== undefined && !Array.isArray(input.values))
      throw invalidArgument(
        'Invalid JSON payload received. Unknown name "values": Proto field is not repeating, cannot start list.',
      );
    let rows = ((input.values as unknown[] | undefined) ?? []).map((row) => (Array.isArray(row) ? row : [row]));
    if (input.majorDimension === 'COLUMNS') {
      const height = Math.max(0, ...rows.map((r) => r.length));
      rows = Array.from({ length: height }, (_, r) => rows.map((col) => col[r] ?? null));
    }
    for (const [r, row] of rows.entries()) {
      for (const [c, value] of row.entries()) {
        if (value !== null && typeof value === 'object') {
          throw invalidArgument(
            `Invalid values[${r}][${c}]: ${Array.isArray(value) ? 'list_value' : 'struct_value'} {}`,
          );
        }
        if (typeof value === 'string' && value.length > MAX_CELL_CHARACTERS) {
          throw invalidArgument(
            `Your input contains more than the maximum of ${MAX_CELL_CHARACTERS} characters in a single cell.`,
          );
        }
      }
    }
    const { sheet } = range;
    const c1 = range.startCol ?? 0;
    const c2 = Math.min(range.endCol ?? sheet.columnCount - 1, sheet.columnCount - 1);
    const r1 = range.startRow ?? 0;
    // The table: the first run of rows with data from the range's first row, widened to the contiguous
    // columns that hold data in those rows.
    let top = -1;
    for (let r = r1; r < sheet.cells.length; r++) {
      if (rowHasData(sheet, r, c1, c2)) {
        top = r;
        break;
      }
    }
    let tableRange: string | undefined;
    let writeRow = r1;
    let writeCol = c1;
    if (top >= 0) {
      let bottom = top;
      while (rowHasData(sheet, bottom + 1, c1, c2)) bottom++;
      const hasDataInColumn = (c: number) => {
        for (let r = top; r <= bottom; r++) if (!isEmpty(sheet.cells[r]?.[c])) return true;
        return false;
      };
      let left = c1;
      while (left <= c2 && !hasDataInColumn(left)) left++;
      let right = c2;
      while (right >= left && !hasDataInColumn(right)) right--;
      while (left > 0 && hasDataInColumn(left - 1)) left--;
      while (right + 1 < sheet.columnCount && hasDataInColumn(right + 1)) right++;
      tableRange = formatRange(sheet, top, left, bottom, right);
      writeRow = bottom + 1;
      writeCol = left;
    }
    const height = rows.length;
    const width = Math.max(0, ...rows.map((r) => r.length));
    if (insert === 'INSERT_ROWS' && height > 0) {
      // New rows go in at the write position: what was below moves down (nothing moves past the data).
      if (writeRow < sheet.cells.length) {
        sheet.cells.splice(writeRow, 0, ...Array.from({ length: height }, () => [] as (Cell | undefined)[]));
      }
      sheet.rowCount += height;
    }
    for (let r = 0; r < height; r++) {
      sheet.cells[writeRow + r] ??= [];
      const target = sheet.cells[writeRow + r]!;
      for (const [c, value] of rows[r]!.entries()) {
        if (value === null || value === undefined) continue;
        target[writeCol + c] = enter(value as string | number | boolean, option);
      }
    }
    // Adding data past the end still adds the rows or columns it needs (the InsertDataOption reference).
    sheet.rowCount = Math.max(sheet.rowCount, writeRow + height);
    sheet.columnCount = Math.max(sheet.columnCount, writeCol + width);
    const cells = rows.reduce((sum, row) => sum + row.length, 0);
    const updates: Record<string, unknown> = { spreadsheetId: book.spreadsheetId };
    if (height > 0) {
      updates.updatedRange = formatRange(
        sheet,
        writeRow,
        writeCol,
        writeRow + height - 1,
        writeCol + Math.max(width, 1) - 1,
      );
      updates.updatedRows = height;
      updates.updatedColumns = width;
      updates.updatedCells = cells;
    }
    if (query.get('includeValuesInResponse') === 'true' && height > 0) {
      updates.updatedData = getValues(
        book,
        updates.updatedRange as string,
        new URLSearchParams({ valueRenderOption: query.get('responseValueRenderOption') ?? 'FORMATTED_VALUE' }),
      );
    }
    return { spreadsheetId: book.spreadsheetId, ...(tableRange ? { tableRange } : {}), updates };
  }

  function sheetsApi(req: IncomingMessage, path: string, query: URLSearchParams, body: unknown, log: LoggedRequest) {
    const method = req.method ?? 'GET';
    const valuesMatch = /^\/v4\/spreadsheets\/([^/]+)\/values\/(.+)$/.exec(path);
    if (valuesMatch) {
      const id = decodeURIComponent(valuesMatch[1]!);
      let rawRange = valuesMatch[2]!;
      const append = rawRange.endsWith(':append');
      if (append) rawRange = rawRange.slice(0, -':append'.length);
      const a1 = decodeURIComponent(rawRange);
      if (append && method === 'POST') {
        const token = bearer(req, 'AppendValues');
        log.principal = token.principal;
        return appendValues(spreadsheetFor(id, token, 'AppendValues', true), a1, query, body);
      }
      if (!append && method === 'GET') {
        const token = bearer(req, 'GetValues');
        log.principal = token.principal;
        return getValues(spreadsheetFor(id, token, 'GetValues', false), a1, query);
      }
    }
    const bookMatch = /^\/v4\/spreadsheets\/([^/:]+)$/.exec(path);
    if (bookMatch && method === 'GET') {
      const token = bearer(req, 'GetSpreadsheet');
      log.principal = token.principal;
      const resource = spreadsheetResource(
        spreadsheetFor(decodeURIComponent(bookMatch[1]!), token, 'GetSpreadsheet', false),
      );
      const fields = query.get('fields');
      return fields ? pick(resource, parseFields(fields)) : resource;
    }
    throw rpcError(404, 'NOT_FOUND', `Method not found.`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const parsed = new URL(req.url ?? '/', url);
    const path = parsed.pathname;
    const query = parsed.searchParams;
    const log: LoggedRequest = {
      method: req.method ?? 'GET',
      path,
      query: Object.fromEntries(query),
      principal: null,
      status: 200,
    };
    requests.push(log);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      log.status = status;
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
      res.end(JSON.stringify(body));
    };
    const contentType = req.headers['content-type'] ?? '';
    const form = (): Record<string, string> => {
      if (contentType.includes('application/json')) {
        try {
          return raw ? (JSON.parse(raw) as Record<string, string>) : {};
        } catch {
          return {};
        }
      }
      return Object.fromEntries(new URLSearchParams(raw));
    };
    try {
      if (path === '/o/oauth2/v2/auth' && req.method === 'GET') {
        authorize(query, res);
        log.status = res.statusCode;
        return;
      }
      if (path === '/token' && req.method === 'POST') {
        return send(200, tokenEndpoint({ ...Object.fromEntries(query), ...form() }, req.headers.authorization), {
          'cache-control': 'no-cache, no-store, max-age=0, must-revalidate',
        });
      }
      if (path === '/revoke' && req.method === 'POST') return send(200, revoke(query.get('token') ?? form().token));
      if (path === '/tokeninfo') {
        // google-auth-library's getTokenInfo posts the token as a bearer header, the documented form as a parameter.
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        return send(200, tokenInfo(query.get('access_token') ?? form().access_token ?? bearer));
      }
      if (path.startsWith('/v4/spreadsheets')) {
        let body: unknown;
        if (raw) {
          try {
            body = JSON.parse(raw);
          } catch {
            throw invalidArgument('Invalid JSON payload received. Unexpected token.');
          }
        }
        return send(200, sheetsApi(req, path, query, body, log));
      }
      res.writeHead(404, { 'content-type': 'text/html; charset=UTF-8' });
      log.status = 404;
      res.end(
        '<!DOCTYPE html><title>Error 404 (Not Found)!!1</title><p>The requested URL was not found on this server.',
      );
    } catch (err) {
      if (!(err instanceof GoogleError)) throw err;
      send(err.status, err.body, err.headers);
    }
  }

  let sheetIds = 0;
  const fake: FakeGoogle = {
    url,
    endpoints: {
      oauth2AuthBaseUrl: `${url}/o/oauth2/v2/auth`,
      oauth2TokenUrl: `${url}/token`,
      oauth2RevokeUrl: `${url}/revoke`,
      tokenInfoUrl: `${url}/tokeninfo`,
    },
    rootUrl: `${url}/`,
    client: [...clients.values()][0]!,
    clients,
    user,
    spreadsheets,
    requests,
    consent: 'grant',
    grantScopes: null,
    addServiceAccount,
    addSpreadsheet(init = {}) {
      const book: FakeSpreadsheet = {
        spreadsheetId: init.id ?? `1${random(32)}`,
        title: init.title ?? 'Untitled spreadsheet',
        sheets: (init.sheets ?? ['Sheet1']).map((title, index) => ({
          sheetId: index === 0 ? 0 : randomInt(1, 2_000_000_000) + sheetIds++,
          title,
          rowCount: 1000,
          columnCount: 26,
          cells: [],
        })),
        editors: new Set(init.editors ?? [user]),
      };
      spreadsheets.set(book.spreadsheetId, book);
      return book;
    },
    share(spreadsheetId, principal) {
      const book = spreadsheets.get(spreadsheetId);
      if (!book) throw new Error(`no spreadsheet ${spreadsheetId}`);
      book.editors.add(principal);
    },
    sheetValues(spreadsheetId, title) {
      const book = spreadsheets.get(spreadsheetId);
      const sheet = book?.sheets.find((s) => s.title === title);
      if (!book || !sheet) throw new Error(`no sheet ${title} in ${spreadsheetId}`);
      const values = getValues(book, quoteTitle(title), new URLSearchParams()).values ?? [];
      return values.map((row) => row.map(String));
    },
    exhaustQuota(count = 1, kind = 'write') {
      forced[kind] += count;
    },
    expireAccessTokens() {
      const past = Date.now() - 1;
      for (const token of accessTokens.values()) token.expiresAt = Math.min(token.expiresAt, past);
    },
    isRevoked(token) {
      return accessTokens.get(token)?.revoked ?? refreshTokens.get(token)?.revoked ?? false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
