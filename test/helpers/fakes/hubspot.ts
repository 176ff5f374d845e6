import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseDomain } from 'tldts';

/**
 * A local HubSpot: the part of the API the destinations use, for the official client
 * (`new Client({ accessToken, basePath: fake.url })`, @hubspot/api-client 13.5.0) to talk to. Every rule
 * below names where it comes from; test/fixtures/hubspot/SOURCES.md holds the sources, quoted, and the
 * points where no public source was found (then the fake's choice is written here as such).
 *
 * OAuth 2.0 (the legacy v1 endpoints the client calls; spec `PublicApiSpecs/Auth/Oauth/Rollouts/155908/v1/oauth.json`):
 * - `GET /oauth/authorize?client_id&redirect_uri&scope[&optional_scope][&state]`: HubSpot's install page
 *   (app.hubspot.com in real life, served here on the same origin). The fake's user consents at once for
 *   `options.portal`: 302 to `redirect_uri?code=<uuid>&state=<state>`. An unknown `client_id`, a
 *   `redirect_uri` that is not one of the app's (exact match) or a missing `scope` is refused on the page
 *   itself (400 text/html), never redirected: RFC 6749 §4.1.2.1 forbids redirecting to an unverified
 *   URI, and HubSpot shows its own error page (its wording was not found: the page's text is the fake's).
 * - `POST /oauth/v1/token` (`application/x-www-form-urlencoded`; v1 also read the same names from the
 *   query string, so does the fake): `grant_type=authorization_code` with `code`, `redirect_uri`,
 *   `client_id`, `client_secret`; `grant_type=refresh_token` with `refresh_token`, `client_id`,
 *   `client_secret`. Answers `{token_type: 'bearer', refresh_token, access_token, expires_in}` (the v1
 *   guide's fields; access tokens live 1800 s, `accessTokenTtlSeconds`). A refresh answers the same refresh
 *   token (HubSpot's refresh tokens do not rotate). Codes are single-use and expire (`authCodeTtlSeconds`).
 *   Errors are 400 with HubSpot's OAuth body, `{error, error_description, status, message}` (changelog
 *   "New OAuth v3 API Endpoints and Standardized Error Responses": RFC 6749 fields added, `status` and
 *   `message` kept, "reflected in both the v1 and v3 OAuth API endpoints"): `BAD_AUTH_CODE`
 *   (`invalid_grant`, "missing or unknown auth code"), `EXPIRED_AUTH_CODE`, `BAD_REFRESH_TOKEN`
 *   (`invalid_grant`, "refresh token is invalid, expired or revoked"), `BAD_CLIENT_ID` (`invalid_client`),
 *   `BAD_CLIENT_SECRET`, `BAD_REDIRECT_URI`, `BAD_GRANT_TYPE` (`unsupported_grant_type`).
 * - `GET /oauth/v1/access-tokens/:token`: `{token, user, hub_domain, scopes, hub_id, app_id, expires_in,
 *   user_id, token_type: 'access'}` (the docs' example); `GET /oauth/v1/refresh-tokens/:token`:
 *   `{token, user, hub_domain, scopes, hub_id, client_id, user_id, token_type: 'refresh'}`.
 * - `DELETE /oauth/v1/refresh-tokens/:token`: 204. "This will only delete the refresh token. Access
 *   tokens generated with the refresh token will not be affected" (docs), so they keep working until they
 *   expire; `uninstall()` is what ends them all (an app uninstalled from the account).
 *   None of these three need an Authorization header (the client sends none to them).
 *   Unknown, expired or revoked tokens there: 404 `resource not found` (not found in a source: the fake's).
 *
 * Authentication of the CRM endpoints: `Authorization: Bearer <token>`, an OAuth access token or a
 * private-app token (`pat-na1-…`, `options.privateApps`). Missing or unknown: 401 `INVALID_AUTHENTICATION`
 * "Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more
 * details at https://developers.hubspot.com/docs/methods/auth/oauth-overview"; an expired access token:
 * 401 `EXPIRED_AUTHENTICATION` "The OAuth token used to make this call expired 75 second(s) ago." with
 * `context: {"expire time": [ISO]}` (both bodies as captured from the live API by public projects). A
 * token of an uninstalled app is unknown (401 `INVALID_AUTHENTICATION`). A token without the endpoint's
 * scope: 403 `MISSING_SCOPES` (the docs' example body, `requiredGranularScopes`).
 *
 * Rate limits (usage guidelines): a ten-second rolling window per app and installing account,
 * `TEN_SECONDLY_ROLLING`. Defaults are HubSpot's published values for the tier chosen here: an OAuth app
 * distributed through the marketplace, "limited to 110 requests every 10 seconds" per installing account
 * (`rateLimit.oauthMax`); a private app on a Free/Starter account, 100 per 10 s and 250,000 a day
 * (`rateLimit.privateAppMax`, `privateAppDailyMax`; the daily count resets at UTC midnight, HubSpot's at
 * the account's midnight). Every CRM answer carries `X-HubSpot-RateLimit-Interval-Milliseconds`, `-Max`
 * and `-Remaining`; private apps' also `-Daily` and `-Daily-Remaining` ("not included in the response to
 * API requests authorized using OAuth"). Over the limit: 429 `{status: 'error', message: 'You have reached
 * your ten_secondly_rolling limit.', errorType: 'RATE_LIMIT', correlationId, policyName:
 * 'TEN_SECONDLY_ROLLING', requestId}` (the docs' 429 example, daily: `DAILY`, "You have reached your
 * daily limit."). Refused requests are not counted (not found in a source: the fake's). `throttle(n)`
 * answers the next n CRM requests 429 whatever the window.
 *
 * CRM (spec `PublicApiSpecs/CRM/{Contacts,Companies,Properties}/Rollouts/…/v3/*.json`, guide "Using
 * Object APIs"):
 * - `POST /crm/v3/objects/{contacts|companies}/batch/upsert` `{inputs: [{id, idProperty, properties,
 *   objectWriteTraceId?}]}`. "Object API batch endpoints are limited to 100 inputs per request": 101 is a
 *   400 `VALIDATION_ERROR` (its text is the fake's; HubSpot's was not found). `idProperty` must be a property "whose values are unique for the object": `email` for contacts,
 *   or a property with `hasUniqueValue` (custom ones, `options.customProperties`); anything else is 400
 *   "Unable to perform update/upsert by non-unique 0-2 property domain" — so companies cannot be upserted
 *   by `domain` (observed live by several public projects; HubSpot does not flag `domain` unique). The
 *   same id twice in one request: 400 "Duplicate IDs found in batch input: [x]. IDs must be unique".
 *   Emails are stored lowercased and matched case-insensitively; other unique values exactly.
 *   Each input is created or updated (`new: true|false`); sent again it updates, never duplicates.
 *   Answer 200 `{status: 'COMPLETE', results, startedAt, completedAt}`, each result `{id, properties,
 *   createdAt, updatedAt, archived: false, new}` (properties: all the record holds, with `createdate`,
 *   `hs_object_id` and `lastmodifieddate` / companies' `hs_lastmodifieddate`), not in input order
 *   (`resultOrder`, observed). Results carry no `objectWriteTraceId` (the docs' multi-status example has
 *   none). The fake's own refusals, where no source says: an input without `idProperty` (nor
 *   `?idProperty=`), and one whose `properties` give its idProperty another value than its `id`.
 * - Property validation, per input, every property: unknown → `PROPERTY_DOESNT_EXIST` 'Property "x" does
 *   not exist'; read-only → `READ_ONLY_VALUE`; contacts' email → `INVALID_EMAIL` "Email address x is
 *   invalid" (HubSpot: no quotes in the local part, the domain must end in an IANA TLD, so the reserved
 *   `.test`, `.example`, `.invalid`, `localhost` are refused; checked with the Public Suffix List's ICANN
 *   section from `tldts`, installed through jsforce, not a direct dependency); a string over
 *   65,536 characters → `MAX_LENGTH_EXCEEDED` (limit from the brief; the code and text are the fake's);
 *   an enumeration value with leading or trailing whitespace → `LEADING_TRAILING_WHITESPACE` (changelog
 *   2025); an enumeration value not among the options' internal values (case-sensitive) → `INVALID_OPTION`
 *   "x was not one of the allowed options: [label: …]". Empty strings clear a value.
 * - Partial failures, as the reference defines them: multi-status (207 `{status, results, numErrors,
 *   errors, startedAt, completedAt}`, each error `{status: 'error', category: 'VALIDATION_ERROR', message,
 *   context: {objectWriteTraceId: [id]}}`) only when every input carries a unique `objectWriteTraceId`
 *   (the docs describe it for batch create; public projects observed upsert doing the same). Otherwise one
 *   invalid input refuses the whole request, 400 `VALIDATION_ERROR` with the first invalid input's
 *   property errors (`{status, message: 'Property values were not valid: [...]', correlationId, errors,
 *   category}`, the docs' example), and nothing in it is written.
 * - `GET /crm/v3/properties/{contacts|companies}`: `{results: Property[]}` (the spec's `Property`), the
 *   defaults below (`lifecyclestage`, `hs_lead_status` enumerations included) and `options.customProperties`.
 *   An unknown object type: 400 "Unable to infer object type from: x" (no category, as captured).
 *
 * JSON answers are `application/json;charset=utf-8` with `X-HubSpot-Correlation-Id`. Every request is in
 * `requests` (method, path, status, time); records in `records.contacts` / `records.companies`. Controls:
 * `advance(ms)` (the fake's clock: token expiry, code expiry, rate windows), `expireAccessToken`,
 * `uninstall`, `throttle(n, policy)`, `failNext(n, status)` (5xx `{status: 'error', message: 'internal
 * error', correlationId}`: a body of the fake's; HubSpot's 5xx bodies vary and were not modelled).
 */

export type ObjectType = 'contacts' | 'companies';

/** An app registered in a developer account (public app, OAuth). */
export interface HubspotApp {
  appId: number;
  clientId: string;
  clientSecret: string;
  /** The app's redirect URLs: `redirect_uri` must be one of them, exactly. */
  redirectUris: string[];
}

/** A private app's static token, installed in the fake's account. */
export interface HubspotPrivateApp {
  /** `pat-na1-…` */
  token: string;
  appId: number;
  scopes: string[];
}

/** The account (portal) and user the fake's consent page installs apps into. */
export interface HubspotPortal {
  hubId: number;
  hubDomain: string;
  user: string;
  userId: number;
}

export interface PropertyOption {
  label: string;
  value: string;
  displayOrder: number;
  hidden: boolean;
  description?: string;
}

/** A property as `GET /crm/v3/properties/:objectType` lists it (the spec's `Property`). */
export interface Property {
  name: string;
  label: string;
  type: string;
  fieldType: string;
  description: string;
  groupName: string;
  options: PropertyOption[];
  displayOrder: number;
  calculated: boolean;
  externalOptions: boolean;
  hasUniqueValue: boolean;
  hidden: boolean;
  hubspotDefined?: boolean;
  modificationMetadata: { archivable: boolean; readOnlyDefinition: boolean; readOnlyValue: boolean };
  formField: boolean;
  dataSensitivity: 'non_sensitive';
  createdAt: string;
  updatedAt: string;
  archived: boolean;
}

/** What options give for a custom property; the rest is filled as HubSpot lists a custom property. */
export interface CustomProperty {
  name: string;
  label?: string;
  /** `string` (default), `enumeration`, `number`, `datetime`, `bool`. */
  type?: string;
  /** `text` (default), `select`, `radio`, `checkbox`, `number`, `booleancheckbox`. */
  fieldType?: string;
  groupName?: string;
  options?: { label: string; value: string }[];
  hasUniqueValue?: boolean;
}

export interface CrmRecord {
  id: string;
  properties: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  archived: false;
}

export interface RequestLogEntry {
  method: string;
  /** The path, without the query string. */
  path: string;
  status: number;
  /** When it was answered, on the fake's clock (ms since the epoch). */
  time: number;
  /** `oauth`, `private-app`, or `none` (OAuth endpoints, refused credentials). */
  auth: 'oauth' | 'private-app' | 'none';
}

export interface AccessTokenState {
  token: string;
  clientId: string;
  appId: number;
  hubId: number;
  scopes: string[];
  /** ms since the epoch, on the fake's clock. */
  expiresAt: number;
  refreshToken: string;
}

export interface RefreshTokenState {
  token: string;
  clientId: string;
  hubId: number;
  scopes: string[];
  revoked: boolean;
}

export type RatePolicy = 'TEN_SECONDLY_ROLLING' | 'DAILY';

export interface FakeHubspotOptions {
  apps?: HubspotApp[];
  privateApps?: HubspotPrivateApp[];
  portal?: Partial<HubspotPortal>;
  /** Lifetime of access tokens, seconds (HubSpot: 1800). */
  accessTokenTtlSeconds?: number;
  /** Lifetime of authorization codes, seconds (HubSpot: "a short window"; not published; default 600). */
  authCodeTtlSeconds?: number;
  customProperties?: Partial<Record<ObjectType, CustomProperty[]>>;
  rateLimit?: {
    intervalMs?: number;
    /** Per OAuth app per installing account, every `intervalMs` (HubSpot, marketplace OAuth apps: 110). */
    oauthMax?: number;
    /** Per private app (HubSpot, Free/Starter: 100). */
    privateAppMax?: number;
    /** Per private app per day (HubSpot, Free/Starter: 250,000). */
    privateAppDailyMax?: number;
  };
  /** Order of batch results: `shuffled` (default; HubSpot's are not in input order) or `input`. */
  resultOrder?: 'shuffled' | 'input';
}

export interface FakeHubspot {
  /** The base URL, for the client's `basePath` (no trailing slash: the client appends `/crm/…`). */
  url: string;
  portal: HubspotPortal;
  records: Record<ObjectType, Map<string, CrmRecord>>;
  /** Every request, in order. */
  requests: RequestLogEntry[];
  accessTokens: Map<string, AccessTokenState>;
  refreshTokens: Map<string, RefreshTokenState>;
  /** Refresh tokens deleted through `DELETE /oauth/v1/refresh-tokens/:token`, in order. */
  revokedRefreshTokens: string[];
  /** The fake's clock (ms since the epoch): the real clock plus what `advance` added. */
  now(): number;
  /** Moves the fake's clock: access tokens and codes expire, rate windows roll. */
  advance(ms: number): void;
  /** Makes an access token expired `secondsAgo` seconds ago. */
  expireAccessToken(token: string, secondsAgo?: number): void;
  /** The app is uninstalled from the account: its access and refresh tokens stop working. */
  uninstall(clientId: string): void;
  /** The next `n` CRM requests (authenticated) are answered 429 with `policy`. */
  throttle(n: number, policy?: RatePolicy): void;
  /** The next `n` CRM requests (authenticated) are answered `status` (5xx), as during an outage. */
  failNext(n: number, status?: number): void;
  /** The properties of an object type, as `GET /crm/v3/properties/:objectType` lists them. */
  properties(objectType: ObjectType): Property[];
  /** A contact by email, case-insensitively. */
  contactByEmail(email: string): CrmRecord | undefined;
  close(): Promise<void>;
}

const OBJECT_TYPE_IDS: Record<ObjectType, string> = { contacts: '0-1', companies: '0-2' };
const MAX_BATCH_INPUTS = 100;
const MAX_STRING_LENGTH = 65_536;
const AUTH_MESSAGE =
  'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview';
const SCOPES_MESSAGE =
  "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.";

/** The scopes an endpoint accepts, any one of them (the specs' `security`, trimmed to the usual ones). */
const WRITE_SCOPES: Record<ObjectType, string[]> = {
  contacts: ['crm.objects.contacts.write'],
  companies: ['crm.objects.companies.write'],
};
const READ_PROPERTY_SCOPES: Record<ObjectType, string[]> = {
  contacts: [
    'crm.objects.contacts.read',
    'crm.objects.contacts.write',
    'crm.schemas.contacts.read',
    'crm.schemas.contacts.write',
  ],
  companies: [
    'crm.objects.companies.read',
    'crm.objects.companies.write',
    'crm.schemas.companies.read',
    'crm.schemas.companies.write',
  ],
};

const LIFECYCLE_STAGES: [string, string][] = [
  ['Subscriber', 'subscriber'],
  ['Lead', 'lead'],
  ['Marketing Qualified Lead', 'marketingqualifiedlead'],
  ['Sales Qualified Lead', 'salesqualifiedlead'],
  ['Opportunity', 'opportunity'],
  ['Customer', 'customer'],
  ['Evangelist', 'evangelist'],
  ['Other', 'other'],
];
const LEAD_STATUSES: [string, string][] = [
  ['New', 'NEW'],
  ['Open', 'OPEN'],
  ['In Progress', 'IN_PROGRESS'],
  ['Open Deal', 'OPEN_DEAL'],
  ['Unqualified', 'UNQUALIFIED'],
  ['Attempted to Contact', 'ATTEMPTED_TO_CONTACT'],
  ['Connected', 'CONNECTED'],
  ['Bad Timing', 'BAD_TIMING'],
];

type PropertySeed = [
  name: string,
  label: string,
  type: string,
  fieldType: string,
  extra?: { options?: [string, string][]; readOnly?: boolean; calculated?: boolean; groupName?: string },
];

const CONTACT_PROPERTIES: PropertySeed[] = [
  ['email', 'Email', 'string', 'text'],
  ['firstname', 'First Name', 'string', 'text'],
  ['lastname', 'Last Name', 'string', 'text'],
  ['phone', 'Phone Number', 'string', 'phonenumber'],
  ['mobilephone', 'Mobile Phone Number', 'string', 'phonenumber'],
  ['company', 'Company Name', 'string', 'text'],
  ['website', 'Website URL', 'string', 'text'],
  ['jobtitle', 'Job Title', 'string', 'text'],
  ['address', 'Street Address', 'string', 'text'],
  ['city', 'City', 'string', 'text'],
  ['state', 'State/Region', 'string', 'text'],
  ['zip', 'Postal Code', 'string', 'text'],
  ['country', 'Country/Region', 'string', 'text'],
  ['lifecyclestage', 'Lifecycle Stage', 'enumeration', 'radio', { options: LIFECYCLE_STAGES }],
  ['hs_lead_status', 'Lead Status', 'enumeration', 'radio', { options: LEAD_STATUSES, groupName: 'sales_properties' }],
  ['createdate', 'Create Date', 'datetime', 'date', { readOnly: true }],
  ['lastmodifieddate', 'Last Modified Date', 'datetime', 'date', { readOnly: true }],
  ['hs_object_id', 'Record ID', 'number', 'number', { readOnly: true, calculated: true }],
];

const COMPANY_PROPERTIES: PropertySeed[] = [
  ['name', 'Company name', 'string', 'text', { groupName: 'companyinformation' }],
  ['domain', 'Company Domain Name', 'string', 'text', { groupName: 'companyinformation' }],
  ['website', 'Website URL', 'string', 'text', { groupName: 'companyinformation' }],
  ['phone', 'Phone Number', 'string', 'phonenumber', { groupName: 'companyinformation' }],
  ['address', 'Street Address', 'string', 'text', { groupName: 'companyinformation' }],
  ['city', 'City', 'string', 'text', { groupName: 'companyinformation' }],
  ['state', 'State/Region', 'string', 'text', { groupName: 'companyinformation' }],
  ['zip', 'Postal Code', 'string', 'text', { groupName: 'companyinformation' }],
  ['country', 'Country/Region', 'string', 'text', { groupName: 'companyinformation' }],
  ['description', 'Description', 'string', 'textarea', { groupName: 'companyinformation' }],
  ['numberofemployees', 'Number of Employees', 'number', 'number', { groupName: 'companyinformation' }],
  ['annualrevenue', 'Annual Revenue', 'number', 'number', { groupName: 'companyinformation' }],
  [
    'lifecyclestage',
    'Lifecycle Stage',
    'enumeration',
    'radio',
    { options: LIFECYCLE_STAGES, groupName: 'companyinformation' },
  ],
  ['createdate', 'Create Date', 'datetime', 'date', { readOnly: true, groupName: 'companyinformation' }],
  [
    'hs_lastmodifieddate',
    'Last Modified Date',
    'datetime',
    'date',
    { readOnly: true, groupName: 'companyinformation' },
  ],
  [
    'hs_object_id',
    'Record ID',
    'number',
    'number',
    { readOnly: true, calculated: true, groupName: 'companyinformation' },
  ],
];

/** The property each object type stamps with the time of the last write. */
const LAST_MODIFIED: Record<ObjectType, string> = { contacts: 'lastmodifieddate', companies: 'hs_lastmodifieddate' };

const PROPERTY_EPOCH = '2019-08-06T02:41:52.541Z';

function defaultProperty(seed: PropertySeed, index: number, objectType: ObjectType): Property {
  const [name, label, type, fieldType, extra = {}] = seed;
  return {
    name,
    label,
    type,
    fieldType,
    description: '',
    groupName: extra.groupName ?? (objectType === 'contacts' ? 'contactinformation' : 'companyinformation'),
    options: (extra.options ?? []).map(([optionLabel, value], displayOrder) => ({
      label: optionLabel,
      value,
      displayOrder,
      hidden: false,
    })),
    displayOrder: index,
    calculated: extra.calculated ?? false,
    externalOptions: false,
    hasUniqueValue: false,
    hidden: false,
    hubspotDefined: true,
    modificationMetadata: { archivable: false, readOnlyDefinition: true, readOnlyValue: extra.readOnly ?? false },
    formField: !extra.readOnly,
    dataSensitivity: 'non_sensitive',
    createdAt: PROPERTY_EPOCH,
    updatedAt: PROPERTY_EPOCH,
    archived: false,
  };
}

function customProperty(custom: CustomProperty, createdAt: string): Property {
  return {
    name: custom.name,
    label: custom.label ?? custom.name,
    type: custom.type ?? 'string',
    fieldType: custom.fieldType ?? 'text',
    description: '',
    groupName: custom.groupName ?? 'leadgate',
    options: (custom.options ?? []).map((option, displayOrder) => ({ ...option, displayOrder, hidden: false })),
    displayOrder: -1,
    calculated: false,
    externalOptions: false,
    hasUniqueValue: custom.hasUniqueValue ?? false,
    hidden: false,
    modificationMetadata: { archivable: true, readOnlyDefinition: false, readOnlyValue: false },
    formField: true,
    dataSensitivity: 'non_sensitive',
    createdAt,
    updatedAt: createdAt,
    archived: false,
  };
}

/** HubSpot's email rules: RFC 5322 shape, no quoted local part, and a domain ending in an IANA TLD. */
export function isValidHubspotEmail(value: string): boolean {
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local.length > 64 || domain.length > 253) return false;
  if (!/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/.test(local)) return false;
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  if (!labels.every((label) => /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/.test(label) || /^xn--[a-z0-9-]+$/i.test(label)))
    return false;
  const parsed = parseDomain(domain, { allowPrivateDomains: false });
  return parsed.isIcann === true && parsed.domain !== null;
}

/**
 * `75 second(s)`, `3 minute(s)`, `6 hour(s)`, `2 day(s)`: HubSpot's messages seen in public captures. Where
 * it switches unit is not known; these thresholds (under 2 of the next unit) agree with every capture.
 */
function elapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 120) return `${seconds} second(s)`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)} minute(s)`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)} hour(s)`;
  return `${Math.floor(seconds / 86_400)} day(s)`;
}

/** An option list as HubSpot prints it in INVALID_OPTION (protobuf text format). */
function printOptions(options: PropertyOption[]): string {
  return `[${options
    .map(
      (option) =>
        `label: ${JSON.stringify(option.label)}\nvalue: ${JSON.stringify(option.value)}\ndisplay_order: ${option.displayOrder}\nhidden: ${option.hidden}\nread_only: false\n`,
    )
    .join(', ')}]`;
}

class ApiError {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {}
}

interface PropertyFailure {
  name: string;
  error: string;
  message: string;
}

interface UpsertInput {
  id: string;
  idProperty: string;
  properties: Record<string, string>;
  objectWriteTraceId: string | undefined;
}

type Caller =
  | { kind: 'oauth'; token: AccessTokenState; rateKey: string; max: number }
  | { kind: 'private-app'; app: HubspotPrivateApp; rateKey: string; max: number; dailyMax: number };

interface AuthorizationCode {
  code: string;
  clientId: string;
  redirectUri: string;
  scopes: string[];
  expiresAt: number;
  used: boolean;
}

export async function startFakeHubspot(options: FakeHubspotOptions = {}): Promise<FakeHubspot> {
  const apps = options.apps ?? [];
  const privateApps = options.privateApps ?? [];
  const portal: HubspotPortal = {
    hubId: options.portal?.hubId ?? 62515,
    hubDomain: options.portal?.hubDomain ?? 'leadgate-test.hubspot.com',
    user: options.portal?.user ?? 'owner@leadgate.test',
    userId: options.portal?.userId ?? 123,
  };
  const accessTtlMs = (options.accessTokenTtlSeconds ?? 1800) * 1000;
  const codeTtlMs = (options.authCodeTtlSeconds ?? 600) * 1000;
  const intervalMs = options.rateLimit?.intervalMs ?? 10_000;
  const oauthMax = options.rateLimit?.oauthMax ?? 110;
  const privateAppMax = options.rateLimit?.privateAppMax ?? 100;
  const privateAppDailyMax = options.rateLimit?.privateAppDailyMax ?? 250_000;
  const resultOrder = options.resultOrder ?? 'shuffled';

  let clockOffset = 0;
  const now = () => Date.now() + clockOffset;
  const iso = (ms = now()) => new Date(ms).toISOString();

  const startedAt = iso();
  const propertyDefinitions: Record<ObjectType, Property[]> = {
    contacts: [
      ...CONTACT_PROPERTIES.map((seed, i) => defaultProperty(seed, i, 'contacts')),
      ...(options.customProperties?.contacts ?? []).map((custom) => customProperty(custom, startedAt)),
    ],
    companies: [
      ...COMPANY_PROPERTIES.map((seed, i) => defaultProperty(seed, i, 'companies')),
      ...(options.customProperties?.companies ?? []).map((custom) => customProperty(custom, startedAt)),
    ],
  };
  const propertyIndex = (objectType: ObjectType) =>
    new Map(propertyDefinitions[objectType].map((property) => [property.name, property]));

  const records: Record<ObjectType, Map<string, CrmRecord>> = { contacts: new Map(), companies: new Map() };
  let nextRecordId = 1001;
  const requests: RequestLogEntry[] = [];
  const codes = new Map<string, AuthorizationCode>();
  const accessTokens = new Map<string, AccessTokenState>();
  const refreshTokens = new Map<string, RefreshTokenState>();
  const revokedRefreshTokens: string[] = [];
  const windows = new Map<string, number[]>();
  const daily = new Map<string, { day: number; count: number }>();
  let throttled: { remaining: number; policy: RatePolicy } = { remaining: 0, policy: 'TEN_SECONDLY_ROLLING' };
  let failing: { remaining: number; status: number } = { remaining: 0, status: 500 };

  const correlationId = () => randomUUID();
  const apiError = (status: number, message: string, category?: string, extra: Record<string, unknown> = {}) =>
    new ApiError(status, {
      status: 'error',
      message,
      correlationId: correlationId(),
      ...extra,
      ...(category ? { category } : {}),
    });
  const oauthError = (status: string, error: string, message: string) =>
    new ApiError(400, { error, error_description: message, status, message });
  const notFound = () => apiError(404, 'resource not found');

  // ---- OAuth ------------------------------------------------------------------------------------

  function issueAccessToken(clientId: string, appId: number, hubId: number, scopes: string[], refreshToken: string) {
    const token = `C${randomBytes(60).toString('base64url')}`;
    const state: AccessTokenState = {
      token,
      clientId,
      appId,
      hubId,
      scopes,
      expiresAt: now() + accessTtlMs,
      refreshToken,
    };
    accessTokens.set(token, state);
    return state;
  }

  function tokenAnswer(access: AccessTokenState) {
    return {
      token_type: 'bearer',
      refresh_token: access.refreshToken,
      access_token: access.token,
      expires_in: Math.round(accessTtlMs / 1000),
    };
  }

  /** The install page: consents at once, or refuses on the page (no redirect to an unverified URI). */
  function authorize(url: URL, res: ServerResponse): number {
    const refuse = (why: string) => {
      res.writeHead(400, { 'content-type': 'text/html;charset=utf-8' });
      res.end(
        `<!DOCTYPE html><html><head><title>HubSpot</title></head><body><h1>Authorization failed</h1><p>${why}</p></body></html>`,
      );
      return 400;
    };
    const clientId = url.searchParams.get('client_id') ?? '';
    const redirectUri = url.searchParams.get('redirect_uri') ?? '';
    const app = apps.find((candidate) => candidate.clientId === clientId);
    if (!app) return refuse('Authorization failed because this app was not found (unknown client_id).');
    if (!app.redirectUris.includes(redirectUri))
      return refuse("Authorization failed because the redirect URL doesn't match the app's redirect URLs.");
    const scope = url.searchParams.get('scope') ?? '';
    const scopes = [
      ...new Set([...scope.split(/[\s+]+/), ...(url.searchParams.get('optional_scope') ?? '').split(/[\s+]+/)]),
    ].filter((s) => s !== '');
    if (scope.trim() === '') return refuse('Authorization failed because no scope was requested.');
    const code = randomUUID();
    codes.set(code, { code, clientId, redirectUri, scopes, expiresAt: now() + codeTtlMs, used: false });
    const target = new URL(redirectUri);
    target.searchParams.set('code', code);
    const state = url.searchParams.get('state');
    if (state !== null) target.searchParams.set('state', state);
    res.writeHead(302, { location: target.toString(), 'content-type': 'text/html;charset=utf-8' });
    res.end();
    return 302;
  }

  function token(params: URLSearchParams) {
    const grantType = params.get('grant_type');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token')
      throw oauthError('BAD_GRANT_TYPE', 'unsupported_grant_type', 'missing or unsupported grant_type');
    const app = apps.find((candidate) => candidate.clientId === params.get('client_id'));
    if (!app) throw oauthError('BAD_CLIENT_ID', 'invalid_client', 'missing or invalid client id');
    if (params.get('client_secret') !== app.clientSecret)
      throw oauthError('BAD_CLIENT_SECRET', 'invalid_client', 'missing or invalid client secret');
    if (grantType === 'authorization_code') {
      const code = codes.get(params.get('code') ?? '');
      if (!code || code.used || code.clientId !== app.clientId)
        throw oauthError('BAD_AUTH_CODE', 'invalid_grant', 'missing or unknown auth code');
      if (code.expiresAt <= now()) throw oauthError('EXPIRED_AUTH_CODE', 'invalid_grant', 'auth code is expired');
      if (params.get('redirect_uri') !== code.redirectUri)
        throw oauthError(
          'BAD_REDIRECT_URI',
          'invalid_grant',
          'redirect_uri does not match the redirect_uri used to obtain the auth code',
        );
      code.used = true;
      const refreshToken = `na1-${randomUUID().replaceAll('-', '').slice(0, 4)}-${randomUUID()}`;
      refreshTokens.set(refreshToken, {
        token: refreshToken,
        clientId: app.clientId,
        hubId: portal.hubId,
        scopes: code.scopes,
        revoked: false,
      });
      return tokenAnswer(issueAccessToken(app.clientId, app.appId, portal.hubId, code.scopes, refreshToken));
    }
    const refresh = refreshTokens.get(params.get('refresh_token') ?? '');
    if (!refresh || refresh.revoked || refresh.clientId !== app.clientId)
      throw oauthError('BAD_REFRESH_TOKEN', 'invalid_grant', 'refresh token is invalid, expired or revoked');
    return tokenAnswer(issueAccessToken(app.clientId, app.appId, refresh.hubId, refresh.scopes, refresh.token));
  }

  function liveAccessToken(value: string): AccessTokenState | undefined {
    const state = accessTokens.get(value);
    return state && state.expiresAt > now() ? state : undefined;
  }

  function oauthRoute(method: string, path: string, params: URLSearchParams): { status: number; body?: unknown } {
    if (method === 'POST' && path === '/oauth/v1/token') return { status: 200, body: token(params) };
    const accessPath = path.match(/^\/oauth\/v1\/access-tokens\/([^/]+)$/);
    if (method === 'GET' && accessPath) {
      const state = liveAccessToken(decodeURIComponent(accessPath[1]!));
      if (!state) throw notFound();
      return {
        status: 200,
        body: {
          token: state.token,
          user: portal.user,
          hub_domain: portal.hubDomain,
          scopes: state.scopes,
          hub_id: state.hubId,
          app_id: state.appId,
          expires_in: Math.floor((state.expiresAt - now()) / 1000),
          user_id: portal.userId,
          token_type: 'access',
        },
      };
    }
    const refreshPath = path.match(/^\/oauth\/v1\/refresh-tokens\/([^/]+)$/);
    if (refreshPath && (method === 'GET' || method === 'DELETE')) {
      const value = decodeURIComponent(refreshPath[1]!);
      const state = refreshTokens.get(value);
      if (!state || state.revoked) throw notFound();
      if (method === 'DELETE') {
        state.revoked = true;
        revokedRefreshTokens.push(value);
        return { status: 204 };
      }
      return {
        status: 200,
        body: {
          token: state.token,
          user: portal.user,
          hub_domain: portal.hubDomain,
          scopes: state.scopes,
          hub_id: state.hubId,
          client_id: state.clientId,
          user_id: portal.userId,
          token_type: 'refresh',
        },
      };
    }
    throw notFound();
  }

  // ---- Authentication and limits -----------------------------------------------------------------

  function authenticate(header: string | undefined): Caller {
    const match = header?.match(/^Bearer\s+(\S+)$/i);
    if (!match) throw apiError(401, AUTH_MESSAGE, 'INVALID_AUTHENTICATION');
    const value = match[1]!;
    const privateApp = privateApps.find((app) => app.token === value);
    if (privateApp)
      return {
        kind: 'private-app',
        app: privateApp,
        rateKey: `private-app:${privateApp.appId}`,
        max: privateAppMax,
        dailyMax: privateAppDailyMax,
      };
    const state = accessTokens.get(value);
    if (!state) throw apiError(401, AUTH_MESSAGE, 'INVALID_AUTHENTICATION');
    if (state.expiresAt <= now())
      throw apiError(
        401,
        `The OAuth token used to make this call expired ${elapsed(now() - state.expiresAt)} ago.`,
        'EXPIRED_AUTHENTICATION',
        { context: { 'expire time': [iso(state.expiresAt)] } },
      );
    return { kind: 'oauth', token: state, rateKey: `oauth:${state.appId}:${state.hubId}`, max: oauthMax };
  }

  function rateHeaders(caller: Caller, remaining: number): Record<string, string> {
    const headers: Record<string, string> = {
      'x-hubspot-ratelimit-interval-milliseconds': String(intervalMs),
      'x-hubspot-ratelimit-max': String(caller.max),
      'x-hubspot-ratelimit-remaining': String(Math.max(0, remaining)),
    };
    if (caller.kind === 'private-app') {
      const used = daily.get(caller.rateKey)?.count ?? 0;
      headers['x-hubspot-ratelimit-daily'] = String(caller.dailyMax);
      headers['x-hubspot-ratelimit-daily-remaining'] = String(Math.max(0, caller.dailyMax - used));
    }
    return headers;
  }

  function rateLimited(caller: Caller, policy: RatePolicy): ApiError {
    const body = {
      status: 'error',
      message:
        policy === 'DAILY' ? 'You have reached your daily limit.' : 'You have reached your ten_secondly_rolling limit.',
      errorType: 'RATE_LIMIT',
      correlationId: correlationId(),
      policyName: policy,
      requestId: randomUUID(),
    };
    return new ApiError(429, body, rateHeaders(caller, 0));
  }

  /** Counts the request in its windows, or throws the 429; returns the headers of the answer. */
  function admit(caller: Caller): Record<string, string> {
    const at = now();
    const window = (windows.get(caller.rateKey) ?? []).filter((t) => t > at - intervalMs);
    windows.set(caller.rateKey, window);
    if (throttled.remaining > 0) {
      throttled.remaining -= 1;
      throw rateLimited(caller, throttled.policy);
    }
    if (caller.kind === 'private-app') {
      const day = Math.floor(at / 86_400_000);
      const count = daily.get(caller.rateKey);
      if (!count || count.day !== day) daily.set(caller.rateKey, { day, count: 0 });
      if (daily.get(caller.rateKey)!.count >= caller.dailyMax) throw rateLimited(caller, 'DAILY');
    }
    if (window.length >= caller.max) throw rateLimited(caller, 'TEN_SECONDLY_ROLLING');
    window.push(at);
    if (caller.kind === 'private-app') daily.get(caller.rateKey)!.count += 1;
    return rateHeaders(caller, caller.max - window.length);
  }

  function requireScope(caller: Caller, accepted: string[]) {
    const granted = caller.kind === 'oauth' ? caller.token.scopes : caller.app.scopes;
    if (accepted.some((scope) => granted.includes(scope))) return;
    throw apiError(403, SCOPES_MESSAGE, 'MISSING_SCOPES', {
      errors: [
        {
          message: 'One or more of the following scopes are required.',
          context: { requiredGranularScopes: accepted },
        },
      ],
      links: { scopes: 'https://developers.hubspot.com/scopes' },
    });
  }

  // ---- CRM ---------------------------------------------------------------------------------------

  function objectTypeOf(segment: string): ObjectType {
    if (segment === 'contacts' || segment === '0-1') return 'contacts';
    if (segment === 'companies' || segment === '0-2') return 'companies';
    throw apiError(400, `Unable to infer object type from: ${segment}`);
  }

  /** The key a record is found by: emails lowercased, other unique values as they are. */
  const keyOf = (idProperty: string, value: string) => (idProperty === 'email' ? value.toLowerCase() : value);

  function findByUnique(objectType: ObjectType, idProperty: string, value: string): CrmRecord | undefined {
    const key = keyOf(idProperty, value);
    for (const record of records[objectType].values()) {
      const stored = record.properties[idProperty];
      if (stored !== undefined && keyOf(idProperty, stored) === key) return record;
    }
    return undefined;
  }

  function validate(objectType: ObjectType, input: UpsertInput): PropertyFailure[] {
    const defs = propertyIndex(objectType);
    const failures: PropertyFailure[] = [];
    const values: [string, string][] = Object.entries(input.properties);
    if (!(input.idProperty in input.properties)) values.unshift([input.idProperty, input.id]);
    for (const [name, value] of values) {
      const def = defs.get(name);
      if (!def) {
        failures.push({ name, error: 'PROPERTY_DOESNT_EXIST', message: `Property "${name}" does not exist` });
        continue;
      }
      if (def.modificationMetadata.readOnlyValue) {
        failures.push({
          name,
          error: 'READ_ONLY_VALUE',
          message: `"${name}" is a ${def.calculated ? 'calculated' : 'read only'} property; its value cannot be set.`,
        });
        continue;
      }
      if (value === '') continue;
      if (value.length > MAX_STRING_LENGTH) {
        failures.push({
          name,
          error: 'MAX_LENGTH_EXCEEDED',
          message: `"${name}" is ${value.length} characters long; values may be at most ${MAX_STRING_LENGTH} characters.`,
        });
        continue;
      }
      if (objectType === 'contacts' && name === 'email' && !isValidHubspotEmail(value)) {
        failures.push({ name, error: 'INVALID_EMAIL', message: `Email address ${value} is invalid` });
        continue;
      }
      if (def.type === 'enumeration') {
        if (value !== value.trim()) {
          failures.push({
            name,
            error: 'LEADING_TRAILING_WHITESPACE',
            message: `"${value}" includes leading or trailing whitespace.`,
          });
          continue;
        }
        const chosen = def.fieldType === 'checkbox' ? value.split(';') : [value];
        const bad = chosen.find((one) => !def.options.some((option) => option.value === one));
        if (bad !== undefined)
          failures.push({
            name,
            error: 'INVALID_OPTION',
            message: `${bad} was not one of the allowed options: ${printOptions(def.options)}`,
          });
      }
    }
    return failures;
  }

  /** `Property values were not valid: [...]` with its `errors`, as the docs' 400 example has them. */
  function validationMessage(failures: PropertyFailure[]) {
    return `Property values were not valid: ${JSON.stringify(
      failures.map((failure) => ({
        isValid: false,
        message: failure.message,
        error: failure.error,
        name: failure.name,
        localizedErrorMessage: failure.message,
        portalId: portal.hubId,
      })),
    )}`;
  }

  function readInputs(objectType: ObjectType, body: unknown, query: URLSearchParams): UpsertInput[] {
    const inputs = (body as { inputs?: unknown } | null)?.inputs;
    if (!Array.isArray(inputs))
      throw apiError(400, 'Invalid input JSON: some of required attributes are not set [inputs]', 'VALIDATION_ERROR');
    if (inputs.length > MAX_BATCH_INPUTS)
      throw apiError(
        400,
        `Batch input size ${inputs.length} exceeds the limit of ${MAX_BATCH_INPUTS} inputs per request.`,
        'VALIDATION_ERROR',
        { context: { maxInputs: [String(MAX_BATCH_INPUTS)] } },
      );
    return inputs.map((raw: unknown) => {
      const input = (raw ?? {}) as Record<string, unknown>;
      const missing = ['id', 'properties'].filter((key) => input[key] === undefined || input[key] === null);
      if (missing.length > 0)
        throw apiError(
          400,
          `Invalid input JSON: some of required attributes are not set [${missing.join(', ')}]`,
          'VALIDATION_ERROR',
        );
      const idProperty = String(input.idProperty ?? query.get('idProperty') ?? '');
      if (idProperty === '')
        throw apiError(
          400,
          `Unable to perform upsert without an idProperty for ${OBJECT_TYPE_IDS[objectType]}`,
          'VALIDATION_ERROR',
        );
      const properties: Record<string, string> = {};
      for (const [name, value] of Object.entries(input.properties as Record<string, unknown>))
        properties[name] = value === null || value === undefined ? '' : String(value);
      return {
        id: String(input.id),
        idProperty,
        properties,
        objectWriteTraceId: typeof input.objectWriteTraceId === 'string' ? input.objectWriteTraceId : undefined,
      };
    });
  }

  function write(objectType: ObjectType, input: UpsertInput) {
    const at = iso();
    const existing = findByUnique(objectType, input.idProperty, input.id);
    const properties = { ...input.properties, [input.idProperty]: input.properties[input.idProperty] ?? input.id };
    if (objectType === 'contacts' && properties.email) properties.email = properties.email.toLowerCase();
    const record: CrmRecord = existing ?? {
      id: String(nextRecordId++),
      properties: {},
      createdAt: at,
      updatedAt: at,
      archived: false,
    };
    if (!existing) {
      record.properties.createdate = at;
      record.properties.hs_object_id = record.id;
      records[objectType].set(record.id, record);
    }
    for (const [name, value] of Object.entries(properties)) {
      if (value === '') delete record.properties[name];
      else record.properties[name] = value;
    }
    record.updatedAt = at;
    record.properties[LAST_MODIFIED[objectType]] = at;
    record.properties = Object.fromEntries(Object.entries(record.properties).sort(([a], [b]) => a.localeCompare(b)));
    return {
      id: record.id,
      properties: { ...record.properties },
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      archived: false,
      new: !existing,
    };
  }

  function ordered<T>(results: T[]): T[] {
    if (resultOrder === 'input' || results.length < 2) return results;
    const shuffled = [...results];
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    // A shuffle may land in input order; HubSpot's order is not to be relied on, so never give it.
    if (shuffled.every((result, i) => result === results[i])) shuffled.push(shuffled.shift()!);
    return shuffled;
  }

  function batchUpsert(objectType: ObjectType, body: unknown, query: URLSearchParams) {
    const requestedAt = iso();
    const inputs = readInputs(objectType, body, query);
    const defs = propertyIndex(objectType);
    for (const idProperty of new Set(inputs.map((input) => input.idProperty))) {
      const unique = (objectType === 'contacts' && idProperty === 'email') || defs.get(idProperty)?.hasUniqueValue;
      if (!unique)
        throw apiError(
          400,
          `Unable to perform update/upsert by non-unique ${OBJECT_TYPE_IDS[objectType]} property ${idProperty}`,
          'VALIDATION_ERROR',
        );
    }
    const seen = new Set<string>();
    const duplicates: string[] = [];
    for (const input of inputs) {
      const key = `${input.idProperty}\u0000${keyOf(input.idProperty, input.id)}`;
      if (seen.has(key)) duplicates.push(input.id);
      seen.add(key);
    }
    if (duplicates.length > 0)
      throw apiError(
        400,
        `Duplicate IDs found in batch input: [${duplicates.join(', ')}]. IDs must be unique`,
        'VALIDATION_ERROR',
        { context: { ids: duplicates } },
      );
    // The fake's own refusal (no source says what HubSpot does): an input whose properties give its
    // idProperty another value than its id would leave the record keyed by one and holding the other.
    const mismatch = inputs.find((input) => {
      const given = input.properties[input.idProperty];
      return given !== undefined && keyOf(input.idProperty, given) !== keyOf(input.idProperty, input.id);
    });
    if (mismatch)
      throw apiError(
        400,
        `Input id ${mismatch.id} and its ${mismatch.idProperty} property ${mismatch.properties[mismatch.idProperty]} differ`,
        'VALIDATION_ERROR',
      );
    const traceIds = inputs.map((input) => input.objectWriteTraceId);
    const multiStatus =
      inputs.length > 0 && traceIds.every((id) => id !== undefined) && new Set(traceIds).size === traceIds.length;
    const failures = inputs.map((input) => validate(objectType, input));
    if (!multiStatus) {
      const first = failures.find((list) => list.length > 0);
      if (first)
        throw apiError(400, validationMessage(first), 'VALIDATION_ERROR', {
          errors: first.map((failure) => ({
            message: failure.message,
            code: failure.error,
            context: { propertyName: [failure.name] },
          })),
        });
    }
    const results = [];
    const errors = [];
    for (const [i, input] of inputs.entries()) {
      const inputFailures = failures[i]!;
      if (inputFailures.length === 0) results.push(write(objectType, input));
      else
        errors.push({
          status: 'error',
          category: 'VALIDATION_ERROR',
          message: validationMessage(inputFailures),
          context: { objectWriteTraceId: [input.objectWriteTraceId!] },
        });
    }
    const completedAt = iso();
    if (errors.length > 0)
      return {
        status: 207,
        body: {
          status: 'COMPLETE',
          results: ordered(results),
          numErrors: errors.length,
          errors,
          startedAt: requestedAt,
          completedAt,
        },
      };
    return {
      status: 200,
      body: { status: 'COMPLETE', results: ordered(results), startedAt: requestedAt, completedAt },
    };
  }

  function crmRoute(
    method: string,
    path: string,
    body: unknown,
    query: URLSearchParams,
    caller: Caller,
  ): { status: number; body: unknown } {
    const upsertPath = path.match(/^\/crm\/v3\/objects\/([^/]+)\/batch\/upsert$/);
    if (method === 'POST' && upsertPath) {
      const objectType = objectTypeOf(upsertPath[1]!);
      requireScope(caller, WRITE_SCOPES[objectType]);
      return batchUpsert(objectType, body, query);
    }
    const propertiesPath = path.match(/^\/crm\/v3\/properties\/([^/]+)$/);
    if (method === 'GET' && propertiesPath) {
      const objectType = objectTypeOf(propertiesPath[1]!);
      requireScope(caller, READ_PROPERTY_SCOPES[objectType]);
      const archived = query.get('archived') === 'true';
      const only = query.get('properties')?.split(',').filter(Boolean);
      return {
        status: 200,
        body: {
          results: propertyDefinitions[objectType].filter(
            (property) => property.archived === archived && (!only || only.includes(property.name)),
          ),
        },
      };
    }
    throw notFound();
  }

  // ---- HTTP --------------------------------------------------------------------------------------

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://hubspot.local');
    const method = req.method ?? 'GET';
    let auth: RequestLogEntry['auth'] = 'none';
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const id = (body as { correlationId?: string } | undefined)?.correlationId ?? correlationId();
      if (body === undefined) {
        res.writeHead(status, { 'x-hubspot-correlation-id': id, ...headers });
        res.end();
      } else {
        res.writeHead(status, {
          'content-type': 'application/json;charset=utf-8',
          'x-hubspot-correlation-id': id,
          ...headers,
        });
        res.end(JSON.stringify(body));
      }
      requests.push({ method, path: url.pathname, status, time: now(), auth });
    };

    if (method === 'GET' && url.pathname === '/oauth/authorize') {
      const status = authorize(url, res);
      requests.push({ method, path: url.pathname, status, time: now(), auth });
      return;
    }
    if (url.pathname.startsWith('/oauth/')) {
      const form = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')
        ? new URLSearchParams(raw)
        : new URLSearchParams();
      const params = new URLSearchParams(url.searchParams);
      for (const [key, value] of form) params.set(key, value);
      try {
        const answer = oauthRoute(method, url.pathname, params);
        return send(answer.status, answer.body);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        return send(err.status, err.body, err.headers);
      }
    }

    let headers: Record<string, string> = {};
    try {
      const caller = authenticate(req.headers.authorization);
      auth = caller.kind;
      if (failing.remaining > 0) {
        failing.remaining -= 1;
        throw apiError(failing.status, 'internal error');
      }
      headers = admit(caller);
      let body: unknown;
      if (raw !== '') {
        try {
          body = JSON.parse(raw);
        } catch (err) {
          throw apiError(400, `Invalid input JSON on line 1, column 1: ${(err as Error).message}`);
        }
      }
      const answer = crmRoute(method, url.pathname, body, url.searchParams, caller);
      send(answer.status, answer.body, headers);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      send(err.status, err.body, { ...headers, ...err.headers });
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500, { 'content-type': 'application/json;charset=utf-8' });
      res.end(JSON.stringify({ status: 'error', message: String(err), correlationId: correlationId() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    portal,
    records,
    requests,
    accessTokens,
    refreshTokens,
    revokedRefreshTokens,
    now,
    advance(ms) {
      clockOffset += ms;
    },
    expireAccessToken(value, secondsAgo = 1) {
      const state = accessTokens.get(value);
      if (!state) throw new Error(`no access token ${value}`);
      state.expiresAt = now() - secondsAgo * 1000;
    },
    uninstall(clientId) {
      for (const [value, state] of accessTokens) if (state.clientId === clientId) accessTokens.delete(value);
      for (const state of refreshTokens.values()) if (state.clientId === clientId) state.revoked = true;
    },
    throttle(n, policy = 'TEN_SECONDLY_ROLLING') {
      throttled = { remaining: n, policy };
    },
    failNext(n, status = 500) {
      failing = { remaining: n, status };
    },
    properties: (objectType) => propertyDefinitions[objectType],
    contactByEmail: (email) => findByUnique('contacts', 'email', email),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
