import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseCsv } from 'csv-parse/sync';

/**
 * A local Salesforce org: the login server and the instance in one node:http server (`instance_url` is
 * its `url`), written from Salesforce's published reference for the official client, jsforce 3.10.16,
 * to talk to. Every rule below names where it comes from; test/fixtures/salesforce/SOURCES.md gives the
 * sources in full and says which wording is the fake's own where no public copy could be found.
 *
 * OAuth 2.0 web server flow (REST API Developer Guide, "OAuth 2.0 Web Server Flow"; Salesforce Help,
 * "OAuth 2.0 Authorization Errors", "Revoke OAuth Tokens"):
 * - `GET /services/oauth2/authorize` consents at once: 302 to the registered `redirect_uri` with `code`
 *   (single use, 15 minutes) and `state`. An unknown `client_id` or a `redirect_uri` that is not one of
 *   the connected app's callback URLs never goes back to the client: 302 to this server's
 *   `/setup/secur/RemoteAccessErrorPage.apexp?error=invalid_client_id|redirect_uri_mismatch&error_description=…`
 *   (the page jsforce's own browser test helper watches for). Other errors go to the callback
 *   (`unsupported_response_type`, `invalid_scope`). PKCE `code_challenge` (S256) is honoured.
 * - `POST /services/oauth2/token` (form-encoded): `authorization_code` and `refresh_token` grants. Answers
 *   `access_token`, `refresh_token` (code grant only), `signature` (base64 HMAC-SHA256 of `id + issued_at`
 *   keyed with the client secret), `scope`, `instance_url`, `id` (`<url>/id/<orgId>/<userId>`),
 *   `token_type: "Bearer"`, `issued_at` (epoch ms, a string). No `expires_in`: Salesforce sends none, the
 *   session just stops working (401) when it times out. Errors are 400 `{error, error_description}`:
 *   `invalid_client_id`/"client identifier invalid", `invalid_client`/"invalid client credentials",
 *   `redirect_uri_mismatch`/"redirect_uri must match configuration", `invalid_grant`/"expired
 *   authorization code" | "expired access/refresh token", `unsupported_grant_type`/"grant type not supported".
 * - `POST /services/oauth2/revoke` (`token=`, form or query): 200 with an empty body; a refresh token takes
 *   its access tokens with it; anything else 400 `{error: "invalid_token"}`.
 *
 * REST API under `/services/data/vNN.N/` (REST API Developer Guide): versions 31.0 to 67.0 answer (jsforce
 * 3.10.16 uses 50.0 unless told otherwise), others 404. Every call counts against `DailyApiRequests` and
 * carries `Sforce-Limit-Info: api-usage=<used>/<max>` ("Limit Info Header"); past the allowance every call
 * is 403 `REQUEST_LIMIT_EXCEEDED` "TotalRequests Limit exceeded.". A missing, expired or revoked token is
 * 401 `[{"message":"Session expired or invalid","errorCode":"INVALID_SESSION_ID"}]`. Errors are arrays of
 * `{message, errorCode}` ("Status Codes and Error Responses"); record errors are `{statusCode, message,
 * fields}`. Served: `GET /limits`, `GET /sobjects`, `GET /sobjects/:type/describe` (Lead and Contact,
 * from test/fixtures/salesforce/describe-*.json), `GET /sobjects/:type/:id`, `GET|PATCH
 * /sobjects/:type/:externalIdField/:value` (single upsert: 201 created, 200 updated from 46.0, 204
 * before), and `PATCH /composite/sobjects/:type/:externalIdField` (46.0+, "Upsert Records Using sObject
 * Collections": at most 200 records, else 400 `EXCEEDED_ID_LIMIT`; per-record `{id, success, errors,
 * created}` in request order; `allOrNone` rolls every record back with `ALL_OR_NONE_OPERATION_ROLLED_BACK`;
 * records sharing an external id in one request all fail `DUPLICATE_VALUE` "Duplicate external id specified").
 *
 * Record validation follows the describe: `REQUIRED_FIELD_MISSING` "Required fields are missing: [LastName,
 * Company]", `STRING_TOO_LONG` "<Label>: data value too large: <value> (max length=<n>)",
 * `INVALID_EMAIL_ADDRESS` "<Label>: invalid email address: <value>", `INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST`
 * "<Label>: bad value for restricted picklist field: <value>", `INVALID_FIELD_FOR_INSERT_UPDATE` for read-only
 * fields. External ids match without regard to case. Ids are 18-character ids with the key prefix (`00Q`
 * Lead, `003` Contact, `750` job) and the case-safe suffix.
 *
 * Bulk API 2.0 ingest (Bulk API 2.0 Developer Guide): `POST /jobs/ingest` → `Open` (create answer as
 * captured from a real org: `contentUrl` without a leading slash, `apiVersion` a number); `PUT
 * /jobs/ingest/:id/batches` (`text/csv`, one upload per job: a second is refused "Found multiple contents
 * for job", at most 150 MB once base64-encoded) → 201 with no body; `PATCH /jobs/ingest/:id`
 * `{state: "UploadComplete" | "Aborted"}`; `GET /jobs/ingest/:id` moves the job on at each poll,
 * UploadComplete → InProgress (one internal batch of 10,000 records processed per poll) → JobComplete,
 * or Failed (`errorMessage`, e.g. "InvalidBatch : Field name not found : X", "ClientInputError : LineEnding
 * is invalid on user data. Current LineEnding setting is LF") or Aborted; how many polls each state lasts
 * is `jobPolls`. Results: `successfulResults/` (`"sf__Id","sf__Created",` then the uploaded columns),
 * `failedResults/` (`"sf__Id","sf__Error",` then the uploaded columns; sf__Error is
 * `<CODE>:<message>:<each field and a space>--`, sf__Id filled from 53.0), `unprocessedrecords/` (the uploaded columns), each
 * row echoing the uploaded row as it was sent. `DELETE /jobs/ingest/:id` (UploadComplete, JobComplete,
 * Aborted or Failed jobs) → 204. In CSV an empty cell leaves a field alone and `#N/A` clears it.
 */

/** A field value as the fake stores it. */
export type SfValue = string | number | boolean | null;
/** A record: its Id, system fields and the fields set. */
export type SfRecord = { Id: string } & Record<string, SfValue>;

/** A record error as the REST API and the Bulk API results carry it. */
export interface SaveError {
  statusCode: string;
  message: string;
  fields: string[];
}

interface PicklistValue {
  active: boolean;
  defaultValue: boolean;
  label: string;
  validFor: null;
  value: string;
}

/** A field of an sObject describe (the properties the fake reads; the fixtures carry a few more). */
export interface FieldDescribe {
  name: string;
  label: string;
  type: string;
  length: number;
  nillable: boolean;
  createable: boolean;
  updateable: boolean;
  defaultedOnCreate: boolean;
  defaultValue: SfValue;
  externalId: boolean;
  idLookup: boolean;
  unique: boolean;
  caseSensitive: boolean;
  restrictedPicklist: boolean;
  picklistValues: PicklistValue[];
  [property: string]: unknown;
}

export interface SObjectDescribe {
  name: string;
  label: string;
  keyPrefix: string;
  fields: FieldDescribe[];
  [property: string]: unknown;
}

/** A connected app: its consumer key and secret, callback URLs and OAuth scopes. */
export interface ConnectedApp {
  clientId: string;
  clientSecret: string;
  callbackUrls: string[];
  /** The scopes it may be granted (default `api`, `refresh_token`, `offline_access`, `id`). */
  scopes?: string[];
  /** "Require Secret for Refresh Token Flow" (default true, as for new connected apps). */
  requireSecretForRefresh?: boolean;
}

export type JobState = 'Open' | 'UploadComplete' | 'InProgress' | 'JobComplete' | 'Failed' | 'Aborted';
type Operation = 'insert' | 'update' | 'upsert' | 'delete' | 'hardDelete';
const DELIMITERS = { COMMA: ',', TAB: '\t', PIPE: '|', SEMICOLON: ';', CARET: '^', BACKQUOTE: '`' } as const;
type ColumnDelimiter = keyof typeof DELIMITERS;

/** A row of an ingest job: as uploaded, and what became of it. */
interface JobRow {
  raw: string;
  values: string[];
  outcome?: { ok: true; id: string; created: boolean } | { ok: false; id: string; error: SaveError };
}

/** A Bulk API 2.0 ingest job. */
export interface IngestJob {
  id: string;
  object: string;
  operation: Operation;
  externalIdFieldName: string | undefined;
  lineEnding: 'LF' | 'CRLF';
  columnDelimiter: ColumnDelimiter;
  apiVersion: string;
  state: JobState;
  createdDate: string;
  systemModstamp: string;
  errorMessage: string | undefined;
  /** The uploaded CSV, as sent. */
  data: string | undefined;
  header: { raw: string; fields: string[] } | undefined;
  rows: JobRow[];
  /** Internal batches of 10,000 rows (indexes into rows), the first `batchesDone` processed. */
  batches: number[][];
  batchesDone: number;
  /** Polls answered in the current state. */
  polls: number;
  /** Set by failJob/failNextJob: fails the job once this many batches are processed. */
  failure: { message: string; afterBatches: number } | undefined;
  deleted: boolean;
  totalProcessingTime: number;
}

/** A request as received, and what it was answered. */
export interface LoggedRequest {
  method: string;
  path: string;
  query: string;
  status: number;
  /** Whether it counted against DailyApiRequests. */
  counted: boolean;
  /** The OAuth grant type, for token requests. */
  grantType?: string;
  /** The bearer token it carried (API calls). */
  token?: string;
  /** The bytes uploaded (job data). */
  bytes?: number;
}

export interface FakeSalesforceOptions {
  /** The connected apps (default: one, `apps[0]`, with the callback `http://localhost:3000/oauth/salesforce/callback`). */
  apps?: ConnectedApp[];
  /** DailyApiRequests Max (default 15,000, a Developer Edition's allowance). */
  dailyApiRequests?: number;
  /** DailyBulkApiBatches Max (default 15,000). */
  dailyBulkBatches?: number;
  /** How long an access token works (default two hours, the default session timeout). */
  sessionTimeoutMs?: number;
  /** How many polls a job answers in UploadComplete and at least in InProgress (default 1 and 1). */
  jobPolls?: { uploadComplete: number; inProgress: number };
  /** The upload limit, in base64-encoded bytes (default 150 MB, the guide's limit). */
  maxUploadBase64Bytes?: number;
}

export interface FakeSalesforce {
  /** The login server and the instance: the `loginUrl` and the `instance_url`. */
  url: string;
  apps: ConnectedApp[];
  orgId: string;
  userId: string;
  /** The sObjects the org has (Lead and Contact), as described. */
  describes: Map<string, SObjectDescribe>;
  /** The records of an sObject, in the order created. */
  records(sobject: string): SfRecord[];
  /** The record of an sObject whose external id field holds `value` (matched without regard to case). */
  findByExternalId(sobject: string, field: string, value: string): SfRecord | undefined;
  /** Ingest jobs by id (deleted ones stay, with `deleted: true`). */
  jobs: Map<string, IngestJob>;
  /** Every request received, in order. */
  requests: LoggedRequest[];
  /** DailyApiRequests as used so far. */
  apiUsage(): { used: number; max: number };
  /** Sets the daily allowance (`used` of `max` calls spent). */
  setApiUsage(used: number, max?: number): void;
  /** Spends the rest of the daily allowance: every API call is refused until `setApiUsage`. */
  exhaustDailyAllowance(): void;
  /** Access tokens issued so far stop working (the session timed out): the next call is 401. */
  expireAccessTokens(): void;
  /** Refresh tokens issued so far stop working (revoked by an admin, or expired by policy). */
  expireRefreshTokens(): void;
  /** Polls per state for jobs from now on. */
  jobPolls: { uploadComplete: number; inProgress: number };
  /** The job fails with `message` (as `errorMessage`) at its next poll once `afterBatches` batches are processed. */
  failJob(jobId: string, message?: string, afterBatches?: number): void;
  /** The next job closed fails so. */
  failNextJob(message?: string, afterBatches?: number): void;
  /** Follows an authorization URL as a browser whose user consents: the Location it is sent to. */
  consent(authorizationUrl: string): Promise<URL>;
  close(): Promise<void>;
}

/** The versions answered: 31.0 (the oldest not retired) to 67.0 (Summer '26). */
const MIN_VERSION = 31;
const MAX_VERSION = 67;
const DEFAULT_FAILURE = 'InternalServerError : the fake was told to fail this job';
const ROLLED_BACK: SaveError = {
  statusCode: 'ALL_OR_NONE_OPERATION_ROLLED_BACK',
  message: 'Record rolled back because not all records were valid and the request was using AllOrNone header',
  fields: [],
};
const BATCH_SIZE = 10_000;
const CODE_TTL_MS = 15 * 60 * 1000;

class ApiError {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** `[{message, errorCode}]`, the REST API's error body. */
const apiError = (status: number, errorCode: string, message: string, fields?: string[]) =>
  new ApiError(status, [{ message, errorCode, ...(fields ? { fields } : {}) }]);
const notFound = () => apiError(404, 'NOT_FOUND', 'The requested resource does not exist');
/** `{error, error_description}`, the OAuth endpoints' error body. */
const oauthError = (error: string, description: string) => new ApiError(400, { error, error_description: description });

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** The case-safe suffix of a 15-character id: a letter or digit per 5 characters, from which are capitals. */
function caseSafe(id15: string): string {
  let suffix = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let i = 0; i < 5; i++) {
      const c = id15[chunk * 5 + i] ?? '';
      if (c >= 'A' && c <= 'Z') bits |= 1 << i;
    }
    suffix += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345'[bits];
  }
  return id15 + suffix;
}

const sfDate = (ms = Date.now()) => new Date(ms).toISOString().replace('Z', '+0000');
const lower = (s: string) => s.toLowerCase();
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const quote = (value: string) => `"${value.replaceAll('"', '""')}"`;
/** How the Bulk API writes a record error in sf__Error. */
const bulkError = (e: SaveError) => `${e.statusCode}:${e.message}:${e.fields.map((f) => `${f} `).join('')}--`;

function loadDescribe(name: string): SObjectDescribe {
  const file = new URL(`../../fixtures/salesforce/describe-${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(file, 'utf8')) as SObjectDescribe;
}

/** Reads a request body, whole. */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startFakeSalesforce(options: FakeSalesforceOptions = {}): Promise<FakeSalesforce> {
  let counter = 0;
  const podId = '5g000';
  /** A new 18-character id with the key prefix. */
  const newId = (prefix: string) => {
    counter += 1;
    let n = counter;
    let tail = '';
    while (tail.length < 7) {
      tail = BASE62[n % 62] + tail;
      n = Math.floor(n / 62);
    }
    return caseSafe(prefix + podId + tail);
  };
  const orgId = newId('00D');
  const userId = newId('005');
  const apps: ConnectedApp[] = options.apps ?? [
    {
      clientId: `3MVG9${randomBytes(30).toString('base64url')}`,
      clientSecret: randomBytes(32).toString('hex').toUpperCase(),
      callbackUrls: ['http://localhost:3000/oauth/salesforce/callback'],
    },
  ];
  const sessionTimeoutMs = options.sessionTimeoutMs ?? 2 * 60 * 60 * 1000;
  const maxUpload = options.maxUploadBase64Bytes ?? 150 * 1024 * 1024;
  const usage = { used: 0, max: options.dailyApiRequests ?? 15_000 };
  const batchUsage = { used: 0, max: options.dailyBulkBatches ?? 15_000 };
  const limitsFixture = JSON.parse(
    readFileSync(new URL('../../fixtures/salesforce/limits.json', import.meta.url), 'utf8'),
  ) as Record<string, { Max: number; Remaining: number }>;

  const describes = new Map<string, SObjectDescribe>([
    ['Lead', loadDescribe('lead')],
    ['Contact', loadDescribe('contact')],
  ]);
  const store = new Map<string, Map<string, SfRecord>>([...describes.keys()].map((name) => [name, new Map()]));
  /** sObject → external id field (lower case) → value (lower case) → Id. */
  const extIndex = new Map<string, Map<string, Map<string, string>>>();
  const jobs = new Map<string, IngestJob>();
  const requests: LoggedRequest[] = [];

  interface Code {
    clientId: string;
    redirectUri: string;
    scope: string;
    challenge: string | undefined;
    expiresAt: number;
    used: boolean;
  }
  interface Access {
    clientId: string;
    refreshToken: string | undefined;
    expiresAt: number;
    revoked: boolean;
  }
  interface Refresh {
    clientId: string;
    scope: string;
    revoked: boolean;
  }
  const codes = new Map<string, Code>();
  const accessTokens = new Map<string, Access>();
  const refreshTokens = new Map<string, Refresh>();
  let nextJobFailure: IngestJob['failure'];

  const sobjectOf = (name: string) => {
    for (const d of describes.values()) if (lower(d.name) === lower(name)) return d;
    return undefined;
  };
  /** Field names are case-insensitive, as in the API. */
  const fieldIndex = new Map<SObjectDescribe, Map<string, FieldDescribe>>(
    [...describes.values()].map((d) => [d, new Map(d.fields.map((f) => [lower(f.name), f]))]),
  );
  const fieldOf = (d: SObjectDescribe, name: string) => fieldIndex.get(d)?.get(lower(name));
  const recordsOf = (d: SObjectDescribe) => store.get(d.name) as Map<string, SfRecord>;
  const indexOf = (d: SObjectDescribe, field: string) => {
    let byField = extIndex.get(d.name);
    if (!byField) {
      byField = new Map();
      extIndex.set(d.name, byField);
    }
    let byValue = byField.get(lower(field));
    if (!byValue) {
      byValue = new Map();
      byField.set(lower(field), byValue);
    }
    return byValue;
  };
  const findByExternalId = (d: SObjectDescribe, field: FieldDescribe, value: string) => {
    const id = indexOf(d, field.name).get(field.caseSensitive ? value : lower(value));
    return id === undefined ? undefined : recordsOf(d).get(id);
  };

  // ---- Records --------------------------------------------------------------------------------

  /**
   * Checks a change set against the describe, for a new record (`existing` undefined) or an update:
   * the record as it would be saved, or its errors.
   */
  function validate(
    d: SObjectDescribe,
    changes: Map<string, SfValue>,
    existing: SfRecord | undefined,
  ): { record: SfRecord; errors: [] } | { errors: SaveError[] } {
    const errors: SaveError[] = [];
    const record: SfRecord = existing ? { ...existing } : { Id: '' };
    for (const [name, value] of changes) {
      const field = fieldOf(d, name) as FieldDescribe;
      if (existing ? !field.updateable : !field.createable) {
        errors.push({
          statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE',
          message: `Unable to create/update fields: ${field.name}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`,
          fields: [field.name],
        });
        continue;
      }
      if (value === null) {
        record[field.name] = null;
        continue;
      }
      if (field.type === 'int') {
        record[field.name] = Number(value);
        continue;
      }
      const text = String(value);
      if (text.length > field.length && field.length > 0) {
        errors.push({
          statusCode: 'STRING_TOO_LONG',
          message: `${field.label}: data value too large: ${text} (max length=${field.length})`,
          fields: [field.name],
        });
        continue;
      }
      if (field.type === 'email' && !EMAIL.test(text)) {
        errors.push({
          statusCode: 'INVALID_EMAIL_ADDRESS',
          message: `${field.label}: invalid email address: ${text}`,
          fields: [field.name],
        });
        continue;
      }
      if (field.type === 'picklist' && field.restrictedPicklist) {
        if (!field.picklistValues.some((p) => p.active && p.value === text)) {
          errors.push({
            statusCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
            message: `${field.label}: bad value for restricted picklist field: ${text}`,
            fields: [field.name],
          });
          continue;
        }
      }
      record[field.name] = text;
    }
    if (!existing) {
      for (const field of d.fields) {
        if (record[field.name] !== undefined || !field.defaultedOnCreate) continue;
        if (field.type === 'picklist') {
          const dflt = field.picklistValues.find((p) => p.defaultValue);
          if (dflt) record[field.name] = dflt.value;
        } else if (field.defaultValue !== null) record[field.name] = field.defaultValue;
      }
    }
    const missing = d.fields.filter(
      (f) =>
        !f.nillable &&
        f.createable &&
        !f.defaultedOnCreate &&
        (record[f.name] === undefined || record[f.name] === null || record[f.name] === ''),
    );
    if (missing.length > 0) {
      const names = missing.map((f) => f.name);
      errors.push({
        statusCode: 'REQUIRED_FIELD_MISSING',
        message: `Required fields are missing: [${names.join(', ')}]`,
        fields: names,
      });
    }
    return errors.length > 0 ? { errors } : { record, errors: [] };
  }

  /** Saves a validated record (new or updated): system fields set, external ids indexed. */
  function save(d: SObjectDescribe, record: SfRecord, existing: SfRecord | undefined): SfRecord {
    const now = sfDate();
    if (!existing) {
      record.Id = newId(d.keyPrefix);
      record.OwnerId = userId;
      record.IsDeleted = false;
      record.CreatedDate = now;
    }
    record.LastModifiedDate = now;
    record.SystemModstamp = now;
    for (const field of d.fields) {
      if (!field.externalId && !field.unique) continue;
      const index = indexOf(d, field.name);
      const before = existing?.[field.name];
      if (typeof before === 'string') index.delete(field.caseSensitive ? before : lower(before));
      const after = record[field.name];
      if (typeof after === 'string') index.set(field.caseSensitive ? after : lower(after), record.Id);
    }
    recordsOf(d).set(record.Id, record);
    return record;
  }

  /** A change set's unique values that another record already holds. */
  function duplicateOf(d: SObjectDescribe, record: SfRecord, selfId: string | undefined): SaveError | undefined {
    for (const field of d.fields) {
      if (!field.unique) continue;
      const value = record[field.name];
      if (typeof value !== 'string') continue;
      const holder = findByExternalId(d, field, value);
      if (holder && holder.Id !== selfId)
        return {
          statusCode: 'DUPLICATE_VALUE',
          message: `duplicate value found: ${field.name} duplicates value on record with id: ${holder.Id}`,
          fields: [field.name],
        };
    }
    return undefined;
  }

  type Planned =
    | { ok: true; record: SfRecord; existing: SfRecord | undefined }
    | { ok: false; error: SaveError; id: string | null };

  /**
   * Plans an upsert of many records by one external id field, in order, without saving: records that
   * share an external id value in the same call all fail (`DUPLICATE_VALUE`).
   */
  function planUpsert(
    d: SObjectDescribe,
    extField: FieldDescribe,
    items: { ext: string | undefined; changes: Map<string, SfValue> }[],
  ): Planned[] {
    const seen = new Map<string, number>();
    for (const item of items) {
      if (!item.ext) continue;
      const key = extField.caseSensitive ? item.ext : lower(item.ext);
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    return items.map(({ ext, changes }) => {
      if (!ext)
        return {
          ok: false,
          id: null,
          error: { statusCode: 'MISSING_ARGUMENT', message: `${extField.name} not specified`, fields: [] },
        };
      const key = extField.caseSensitive ? ext : lower(ext);
      if ((seen.get(key) ?? 0) > 1)
        return {
          ok: false,
          id: null,
          error: {
            statusCode: 'DUPLICATE_VALUE',
            message: `Duplicate external id specified: ${key}`,
            fields: [extField.name],
          },
        };
      const existing = findByExternalId(d, extField, ext);
      const checked = validate(d, changes, existing);
      if (checked.errors.length > 0 || !('record' in checked))
        return { ok: false, id: existing?.Id ?? null, error: checked.errors[0] as SaveError };
      const dup = duplicateOf(d, checked.record, existing?.Id);
      if (dup) return { ok: false, id: existing?.Id ?? null, error: dup };
      return { ok: true, record: checked.record, existing };
    });
  }

  /** A record as the REST API answers it. */
  function recordJson(d: SObjectDescribe, record: SfRecord, version: string) {
    const out: Record<string, unknown> = {
      attributes: { type: d.name, url: `/services/data/v${version}/sobjects/${d.name}/${record.Id}` },
    };
    for (const field of d.fields) out[field.name] = record[field.name] ?? null;
    return out;
  }

  /** A JSON record body of the REST API as a change set; unknown fields refuse the whole request. */
  function changesFromJson(d: SObjectDescribe, body: Record<string, unknown>): Map<string, SfValue> {
    const changes = new Map<string, SfValue>();
    for (const [key, value] of Object.entries(body)) {
      if (key === 'attributes') continue;
      const field = fieldOf(d, key);
      if (!field) throw apiError(400, 'INVALID_FIELD', `No such column '${key}' on sobject of type ${d.name}`);
      if (value !== null && typeof value === 'object')
        throw apiError(
          400,
          'JSON_PARSER_ERROR',
          `Cannot deserialize instance of ${field.type === 'int' ? 'int' : 'string'} from ${Array.isArray(value) ? 'START_ARRAY' : 'START_OBJECT'} value ${JSON.stringify(value)}`,
        );
      if (field.type === 'int' && value !== null && !(typeof value === 'number' && Number.isInteger(value)))
        throw apiError(
          400,
          'JSON_PARSER_ERROR',
          `Cannot deserialize instance of int from VALUE_STRING value ${JSON.stringify(value)}`,
        );
      // The REST API stores an empty string as null.
      changes.set(field.name, value === '' ? null : (value as SfValue));
    }
    return changes;
  }

  // ---- OAuth ----------------------------------------------------------------------------------

  const appOf = (clientId: string | null) => apps.find((a) => a.clientId === clientId);
  const scopesOf = (app: ConnectedApp) => app.scopes ?? ['api', 'refresh_token', 'offline_access', 'id'];

  function authorize(url: URL): { status: number; headers: Record<string, string>; body: string } {
    const q = url.searchParams;
    const redirectError = (error: string, description: string) => ({
      status: 302,
      headers: {
        location: `${fake.url}/setup/secur/RemoteAccessErrorPage.apexp?error=${error}&error_description=${encodeURIComponent(description)}`,
      },
      body: '',
    });
    const app = appOf(q.get('client_id'));
    if (!app) return redirectError('invalid_client_id', 'client identifier invalid');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!app.callbackUrls.includes(redirectUri))
      return redirectError('redirect_uri_mismatch', 'redirect_uri must match configuration');
    const back = (params: Record<string, string>) => {
      const target = new URL(redirectUri);
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
      const state = q.get('state');
      if (state !== null) target.searchParams.set('state', state);
      return { status: 302, headers: { location: target.toString() }, body: '' };
    };
    if (q.get('response_type') !== 'code')
      return back({ error: 'unsupported_response_type', error_description: 'response type not supported' });
    const requested = (q.get('scope') ?? '').split(' ').filter(Boolean);
    if (requested.some((s) => !scopesOf(app).includes(s)))
      return back({ error: 'invalid_scope', error_description: 'the requested scope is not allowed' });
    const method = q.get('code_challenge_method');
    if (q.get('code_challenge') && method !== null && method !== 'S256')
      return back({ error: 'invalid_request', error_description: 'unsupported code_challenge_method' });
    const code = `aPrx${randomBytes(48).toString('base64')}`;
    codes.set(code, {
      clientId: app.clientId,
      redirectUri,
      scope: (requested.length > 0 ? requested : scopesOf(app)).join(' '),
      challenge: q.get('code_challenge') ?? undefined,
      expiresAt: Date.now() + CODE_TTL_MS,
      used: false,
    });
    return back({ code });
  }

  /** The token endpoint's answer: a new access token (and refresh token for the code grant). */
  function issue(app: ConnectedApp, scope: string, refreshToken: string | undefined, withRefresh: boolean) {
    const accessToken = `${orgId.slice(0, 15)}!${randomBytes(72).toString('base64url')}`;
    let refresh = refreshToken;
    const scopes = scope.split(' ');
    if (withRefresh && (scopes.includes('refresh_token') || scopes.includes('offline_access'))) {
      refresh = `5Aep861${randomBytes(60).toString('base64url')}`;
      refreshTokens.set(refresh, { clientId: app.clientId, scope, revoked: false });
    }
    accessTokens.set(accessToken, {
      clientId: app.clientId,
      refreshToken: refresh,
      expiresAt: Date.now() + sessionTimeoutMs,
      revoked: false,
    });
    const id = `${fake.url}/id/${orgId}/${userId}`;
    const issuedAt = String(Date.now());
    const signature = createHmac('sha256', app.clientSecret)
      .update(id + issuedAt)
      .digest('base64');
    return {
      access_token: accessToken,
      ...(withRefresh && refresh ? { refresh_token: refresh } : {}),
      signature,
      scope,
      instance_url: fake.url,
      id,
      token_type: 'Bearer',
      issued_at: issuedAt,
    };
  }

  function token(form: URLSearchParams): unknown {
    const grant = form.get('grant_type');
    if (grant !== 'authorization_code' && grant !== 'refresh_token')
      throw oauthError('unsupported_grant_type', 'grant type not supported');
    const app = appOf(form.get('client_id'));
    if (!app) throw oauthError('invalid_client_id', 'client identifier invalid');
    const secret = form.get('client_secret');
    if (secret !== null && secret !== app.clientSecret)
      throw oauthError('invalid_client', 'invalid client credentials');
    if (grant === 'refresh_token') {
      if (secret === null && (app.requireSecretForRefresh ?? true))
        throw oauthError('invalid_client', 'invalid client credentials');
      const presented = form.get('refresh_token') ?? '';
      const refresh = refreshTokens.get(presented);
      if (!refresh || refresh.revoked || refresh.clientId !== app.clientId)
        throw oauthError('invalid_grant', 'expired access/refresh token');
      return issue(app, refresh.scope, presented, false);
    }
    const code = codes.get(form.get('code') ?? '');
    if (!code || code.clientId !== app.clientId) throw oauthError('invalid_grant', 'invalid authorization code');
    if (code.used || code.expiresAt < Date.now()) throw oauthError('invalid_grant', 'expired authorization code');
    if (form.get('redirect_uri') !== code.redirectUri)
      throw oauthError('redirect_uri_mismatch', 'redirect_uri must match configuration');
    const verifier = form.get('code_verifier');
    if (code.challenge) {
      if (!verifier) throw oauthError('invalid_grant', 'invalid code verifier');
      if (createHash('sha256').update(verifier).digest('base64url') !== code.challenge)
        throw oauthError('invalid_request', 'invalid code verifier');
    } else if (secret === null) throw oauthError('invalid_client', 'invalid client credentials');
    code.used = true;
    return issue(app, code.scope, undefined, true);
  }

  function revoke(form: URLSearchParams) {
    const presented = form.get('token') ?? '';
    const refresh = refreshTokens.get(presented);
    if (refresh && !refresh.revoked) {
      refresh.revoked = true;
      for (const access of accessTokens.values()) if (access.refreshToken === presented) access.revoked = true;
      return;
    }
    const access = accessTokens.get(presented);
    if (!access || access.revoked) throw oauthError('invalid_token', 'Token was invalid');
    access.revoked = true;
  }

  /** The access token of an API call, if it still works. */
  function session(req: IncomingMessage, url: URL): string | undefined {
    const header = req.headers.authorization ?? '';
    const match = /^(?:Bearer|OAuth) (.+)$/.exec(header);
    const presented = match?.[1] ?? url.searchParams.get('oauth_token') ?? '';
    const access = accessTokens.get(presented);
    if (!access || access.revoked || access.expiresAt <= Date.now()) return undefined;
    return presented;
  }

  // ---- Bulk API 2.0 -----------------------------------------------------------------------------

  /** A job as `GET /jobs/ingest/:id` answers it. */
  function jobInfo(job: IngestJob) {
    const open = job.state === 'Open';
    return {
      id: job.id,
      operation: job.operation,
      object: job.object,
      createdById: userId,
      createdDate: job.createdDate,
      systemModstamp: job.systemModstamp,
      state: job.state,
      ...(job.externalIdFieldName ? { externalIdFieldName: job.externalIdFieldName } : {}),
      concurrencyMode: 'Parallel',
      contentType: 'CSV',
      apiVersion: Number(job.apiVersion),
      jobType: 'V2Ingest',
      ...(open ? { contentUrl: `services/data/v${job.apiVersion}/jobs/ingest/${job.id}/batches` } : {}),
      lineEnding: job.lineEnding,
      columnDelimiter: job.columnDelimiter,
      ...(open && job.data === undefined
        ? {}
        : {
            numberRecordsProcessed: job.rows.filter((r) => r.outcome).length,
            numberRecordsFailed: job.rows.filter((r) => r.outcome && !r.outcome.ok).length,
          }),
      ...(job.errorMessage ? { errorMessage: job.errorMessage } : {}),
      retries: 0,
      totalProcessingTime: job.totalProcessingTime,
      apiActiveProcessingTime: Math.floor(job.totalProcessingTime / 2),
      apexProcessingTime: 0,
    };
  }

  /** A job as the create request answers it (no jobType, counts or times). */
  function jobCreated(job: IngestJob) {
    return {
      ...jobPatched(job),
      contentUrl: `services/data/v${job.apiVersion}/jobs/ingest/${job.id}/batches`,
      lineEnding: job.lineEnding,
      columnDelimiter: job.columnDelimiter,
    };
  }

  /** A job as the close/abort request answers it. */
  function jobPatched(job: IngestJob) {
    return {
      id: job.id,
      operation: job.operation,
      object: job.object,
      createdById: userId,
      createdDate: job.createdDate,
      systemModstamp: job.systemModstamp,
      state: job.state,
      ...(job.externalIdFieldName ? { externalIdFieldName: job.externalIdFieldName } : {}),
      concurrencyMode: 'Parallel',
      contentType: 'CSV',
      apiVersion: Number(job.apiVersion),
    };
  }

  const setState = (job: IngestJob, state: JobState) => {
    job.state = state;
    job.polls = 0;
    job.systemModstamp = sfDate();
  };
  const failJobNow = (job: IngestJob, message: string) => {
    job.errorMessage = message;
    setState(job, 'Failed');
  };

  function createJob(version: string, body: Record<string, unknown>): IngestJob {
    const d = typeof body.object === 'string' ? sobjectOf(body.object) : undefined;
    if (!d) throw apiError(400, 'INVALIDENTITY', `Entity '${String(body.object)}' is not supported by the Bulk API.`);
    const operation = body.operation;
    if (!['insert', 'update', 'upsert', 'delete', 'hardDelete'].includes(String(operation)))
      throw apiError(400, 'INVALIDJOB', `InvalidJob : Invalid operation: ${String(operation)}`);
    if (body.contentType !== undefined && body.contentType !== 'CSV')
      throw apiError(400, 'INVALIDJOB', `InvalidJob : Invalid contentType: ${String(body.contentType)}`);
    const lineEnding = body.lineEnding ?? 'LF';
    if (lineEnding !== 'LF' && lineEnding !== 'CRLF')
      throw apiError(400, 'INVALIDJOB', `InvalidJob : Invalid lineEnding: ${String(lineEnding)}`);
    const columnDelimiter = body.columnDelimiter ?? 'COMMA';
    if (typeof columnDelimiter !== 'string' || !(columnDelimiter in DELIMITERS))
      throw apiError(400, 'INVALIDJOB', `InvalidJob : Invalid columnDelimiter: ${String(columnDelimiter)}`);
    let externalIdFieldName: string | undefined;
    if (operation === 'upsert') {
      if (typeof body.externalIdFieldName !== 'string' || !body.externalIdFieldName)
        throw apiError(400, 'INVALIDJOB', 'InvalidJob : External ID field is required for upsert operations');
      externalIdFieldName = body.externalIdFieldName;
    }
    const now = sfDate();
    const job: IngestJob = {
      id: newId('750'),
      object: d.name,
      operation: operation as Operation,
      externalIdFieldName,
      lineEnding,
      columnDelimiter: columnDelimiter as ColumnDelimiter,
      apiVersion: version,
      state: 'Open',
      createdDate: now,
      systemModstamp: now,
      errorMessage: undefined,
      data: undefined,
      header: undefined,
      rows: [],
      batches: [],
      batchesDone: 0,
      polls: 0,
      failure: undefined,
      deleted: false,
      totalProcessingTime: 0,
    };
    jobs.set(job.id, job);
    return job;
  }

  /**
   * Parses a job's data when its processing starts. A wrong line ending, CSV that does not parse or a
   * header naming no field fails the job, every row unprocessed.
   */
  function startProcessing(job: IngestJob) {
    const data = job.data ?? '';
    const d = sobjectOf(job.object) as SObjectDescribe;
    const asLines = (message: string) => {
      const lines = data.split(/\r?\n/).filter((line) => line !== '');
      job.header = { raw: lines[0] ?? '', fields: [] };
      job.rows = lines.slice(1).map((raw) => ({ raw, values: [] }));
      failJobNow(job, message);
    };
    // Any line break of the other kind fails the job, inside quoted values too.
    const wrongBreak = job.lineEnding === 'LF' ? data.includes('\r\n') : /(^|[^\r])\n/.test(data);
    if (wrongBreak)
      return asLines(
        `ClientInputError : LineEnding is invalid on user data. Current LineEnding setting is ${job.lineEnding}`,
      );
    let parsed: { raw: string; record: string[] }[];
    try {
      parsed = parseCsv(data, {
        raw: true,
        delimiter: DELIMITERS[job.columnDelimiter],
        record_delimiter: job.lineEnding === 'CRLF' ? '\r\n' : '\n',
        relax_column_count: true,
        skip_empty_lines: true,
      }) as unknown as { raw: string; record: string[] }[];
    } catch (err) {
      return asLines(`ClientInputError : ${(err as Error).message}`);
    }
    const strip = (raw: string) => raw.replace(/\r?\n$/, '');
    const [head, ...rows] = parsed;
    job.header = { raw: strip(head?.raw ?? ''), fields: [] };
    job.rows = rows.map((r) => ({ raw: strip(r.raw), values: r.record }));
    const fields: string[] = [];
    for (const name of head?.record ?? []) {
      const field = fieldOf(d, name);
      if (!field) return failJobNow(job, `InvalidBatch : Field name not found : ${name}`);
      if (fields.includes(field.name)) return failJobNow(job, `InvalidBatch : Duplicate field name : ${name}`);
      fields.push(field.name);
    }
    job.header.fields = fields;
    if (head && job.operation === 'upsert') {
      const ext = fieldOf(d, job.externalIdFieldName ?? '');
      if (!ext || !(ext.externalId || ext.idLookup))
        return failJobNow(
          job,
          `InvalidBatch : Field name provided, ${job.externalIdFieldName} is not an External ID or indexed field for ${d.name}`,
        );
      if (!fields.includes(ext.name))
        return failJobNow(job, `InvalidBatch : External ID field ${ext.name} not found in the header`);
    }
    if (head && job.operation !== 'insert' && job.operation !== 'upsert' && !fields.includes('Id'))
      return failJobNow(job, 'InvalidBatch : Field name not found : Id');
    for (let i = 0; i < job.rows.length; i += BATCH_SIZE)
      job.batches.push(job.rows.slice(i, i + BATCH_SIZE).map((_, j) => i + j));
    setState(job, 'InProgress');
  }

  /** Processes the next internal batch of a job. */
  function processBatch(job: IngestJob) {
    const started = Date.now();
    const d = sobjectOf(job.object) as SObjectDescribe;
    const indexes = job.batches[job.batchesDone] ?? [];
    const fields = job.header?.fields ?? [];
    const withSfId = Number(job.apiVersion) >= 53;
    const changesOf = (row: JobRow) => {
      const changes = new Map<string, SfValue>();
      row.values.forEach((value, col) => {
        const name = fields[col];
        if (name === undefined || name === 'Id' || value === '') return;
        changes.set(name, value === '#N/A' ? null : value);
      });
      return changes;
    };
    /** A row's cells of the wrong type (per row: the job goes on). */
    const typeError = (row: JobRow): SaveError | undefined => {
      if (row.values.length > fields.length)
        return { statusCode: 'INVALID_FIELD', message: 'Record has more fields than the header', fields: [] };
      for (const [col, value] of row.values.entries()) {
        const field = fieldOf(d, fields[col] ?? '');
        if (field?.type === 'int' && value !== '' && value !== '#N/A' && !/^-?\d+$/.test(value))
          return {
            statusCode: 'INVALID_FIELD',
            message: `Failed to deserialize field at col ${col + 1}. Due to, '${value}' is not a valid value for the type xsd:int`,
            fields: [field.name],
          };
      }
      return undefined;
    };
    const fail = (row: JobRow, error: SaveError, id = '') => {
      row.outcome = { ok: false, id: withSfId ? id : '', error };
    };
    if (job.operation === 'upsert') {
      const ext = fieldOf(d, job.externalIdFieldName ?? '') as FieldDescribe;
      const col = fields.indexOf(ext.name);
      const rows = indexes.map((i) => job.rows[i] as JobRow);
      const pending = rows.filter((row) => {
        const error = typeError(row);
        if (error) fail(row, error);
        return !error;
      });
      const plans = planUpsert(
        d,
        ext,
        pending.map((row) => ({ ext: row.values[col] || undefined, changes: changesOf(row) })),
      );
      for (const [i, plan] of plans.entries()) {
        const row = pending[i] as JobRow;
        if (!plan.ok) {
          fail(row, plan.error, plan.id ?? '');
          continue;
        }
        const saved = save(d, plan.record, plan.existing);
        row.outcome = { ok: true, id: saved.Id, created: !plan.existing };
      }
    } else {
      const idCol = fields.indexOf('Id');
      for (const i of indexes) {
        const row = job.rows[i] as JobRow;
        const error = typeError(row);
        if (error) {
          fail(row, error);
          continue;
        }
        const existing = idCol >= 0 ? recordsOf(d).get(row.values[idCol] ?? '') : undefined;
        if (job.operation !== 'insert' && !existing) {
          fail(row, { statusCode: 'INVALID_CROSS_REFERENCE_KEY', message: 'invalid cross reference id', fields: [] });
          continue;
        }
        if (job.operation === 'delete' || job.operation === 'hardDelete') {
          const target = existing as SfRecord;
          recordsOf(d).delete(target.Id);
          for (const byValue of extIndex.get(d.name)?.values() ?? [])
            for (const [k, v] of byValue) if (v === target.Id) byValue.delete(k);
          row.outcome = { ok: true, id: target.Id, created: false };
          continue;
        }
        const checked = validate(d, changesOf(row), existing);
        if (!('record' in checked)) {
          fail(row, checked.errors[0] as SaveError, existing?.Id ?? '');
          continue;
        }
        const dup = duplicateOf(d, checked.record, existing?.Id);
        if (dup) {
          fail(row, dup, existing?.Id ?? '');
          continue;
        }
        const saved = save(d, checked.record, existing);
        row.outcome = { ok: true, id: saved.Id, created: !existing };
      }
    }
    job.batchesDone += 1;
    batchUsage.used += 1;
    job.totalProcessingTime += Math.max(1, Date.now() - started);
    job.systemModstamp = sfDate();
  }

  /** Moves a job on by one poll (see the module comment). */
  function advance(job: IngestJob) {
    const polls = fake.jobPolls;
    if (job.state === 'UploadComplete') {
      if (job.polls < polls.uploadComplete) {
        job.polls += 1;
        return;
      }
      startProcessing(job);
      if ((job.state as JobState) !== 'InProgress') return;
    }
    if (job.state !== 'InProgress') return;
    if (job.failure && job.batchesDone >= job.failure.afterBatches) return failJobNow(job, job.failure.message);
    if (job.batchesDone < job.batches.length) processBatch(job);
    if (job.batchesDone >= job.batches.length && job.polls >= polls.inProgress) return setState(job, 'JobComplete');
    job.polls += 1;
  }

  function results(job: IngestJob, kind: string): string {
    if (!['JobComplete', 'Failed', 'Aborted'].includes(job.state))
      throw apiError(400, 'INVALIDJOBSTATE', `InvalidJobState : Job ${job.id} is not complete (state ${job.state})`);
    const sep = DELIMITERS[job.columnDelimiter];
    const eol = job.lineEnding === 'CRLF' ? '\r\n' : '\n';
    const header = job.header?.raw ?? '';
    const lines: string[] = [];
    if (kind === 'unprocessedrecords') {
      lines.push(header);
      for (const row of job.rows) if (!row.outcome) lines.push(row.raw);
    } else if (kind === 'successfulResults') {
      lines.push([quote('sf__Id'), quote('sf__Created'), header].join(sep));
      for (const row of job.rows)
        if (row.outcome?.ok) lines.push([quote(row.outcome.id), quote(String(row.outcome.created)), row.raw].join(sep));
    } else {
      lines.push([quote('sf__Id'), quote('sf__Error'), header].join(sep));
      for (const row of job.rows)
        if (row.outcome && !row.outcome.ok)
          lines.push([quote(row.outcome.id), quote(bulkError(row.outcome.error)), row.raw].join(sep));
    }
    return lines.join(eol) + eol;
  }

  function ingest(method: string, rest: string[], version: string, req: IncomingMessage, raw: Buffer): Reply {
    if (Number(version) < 41) throw notFound();
    const [jobId, sub, ...more] = rest;
    if (jobId === undefined || jobId === '') {
      if (method === 'POST') {
        const body = parseJson(raw);
        if (!body || typeof body !== 'object' || Array.isArray(body))
          throw apiError(400, 'JSON_PARSER_ERROR', 'Request body is not a JSON object');
        return json(200, jobCreated(createJob(version, body as Record<string, unknown>)));
      }
      if (method === 'GET') {
        const records = [...jobs.values()].filter((j) => !j.deleted).map((j) => jobPatched(j));
        return json(200, { done: true, records, nextRecordsUrl: null });
      }
      throw methodNotAllowed(method, 'GET,POST');
    }
    const job = jobs.get(jobId);
    if (!job || job.deleted) throw notFound();
    if (sub === undefined) {
      if (method === 'GET') {
        advance(job);
        return json(200, jobInfo(job));
      }
      if (method === 'PATCH') {
        const body = parseJson(raw) as { state?: unknown } | undefined;
        const state = body?.state;
        if (state === 'UploadComplete') {
          if (job.state !== 'Open')
            throw apiError(400, 'INVALIDJOBSTATE', `InvalidJobState : Closing a ${job.state} job is not allowed`);
          if (nextJobFailure) {
            job.failure = nextJobFailure;
            nextJobFailure = undefined;
          }
          setState(job, 'UploadComplete');
          return json(200, jobPatched(job));
        }
        if (state === 'Aborted') {
          if (!['Open', 'UploadComplete', 'InProgress'].includes(job.state))
            throw apiError(400, 'INVALIDJOBSTATE', `InvalidJobState : Aborting a ${job.state} job is not allowed`);
          setState(job, 'Aborted');
          return json(200, jobPatched(job));
        }
        throw apiError(400, 'INVALIDJOBSTATE', `InvalidJobState : Invalid state: ${String(state)}`);
      }
      if (method === 'DELETE') {
        if (!['UploadComplete', 'JobComplete', 'Aborted', 'Failed'].includes(job.state))
          throw apiError(400, 'INVALIDJOBSTATE', `InvalidJobState : Deleting a ${job.state} job is not allowed`);
        job.deleted = true;
        return { status: 204, headers: {}, body: '' };
      }
      throw methodNotAllowed(method, 'GET,PATCH,DELETE');
    }
    if (more.length > 1 || (more.length === 1 && more[0] !== '')) throw notFound();
    if (sub === 'batches') {
      if (method !== 'PUT') throw methodNotAllowed(method, 'PUT');
      const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
      if (type !== 'text/csv')
        throw apiError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content type '${type}' is not supported; use text/csv`);
      if (job.data !== undefined)
        throw apiError(
          400,
          'BULK_API_ERROR',
          `Found multiple contents for job: <${job.id}>, please 'Close' / 'Abort' / 'Delete' the current Job then create a new Job and make sure you only do 'PUT' once on a given Job.`,
        );
      if (job.state !== 'Open')
        throw apiError(400, 'INVALIDJOBSTATE', `InvalidJobState : Uploading data to a ${job.state} job is not allowed`);
      if (Math.ceil(raw.length / 3) * 4 > maxUpload)
        throw apiError(413, 'EXCEEDED_MAX_SIZE_REQUEST', `The job data exceeds ${maxUpload} bytes once base64-encoded`);
      job.data = raw.toString('utf8');
      return { status: 201, headers: {}, body: '' };
    }
    if (['successfulResults', 'failedResults', 'unprocessedrecords'].includes(sub)) {
      if (method !== 'GET') throw methodNotAllowed(method, 'GET');
      return { status: 200, headers: { 'content-type': 'text/csv' }, body: results(job, sub) };
    }
    throw notFound();
  }

  // ---- REST API ---------------------------------------------------------------------------------

  interface Reply {
    status: number;
    headers: Record<string, string>;
    body: string;
  }
  const json = (status: number, body: unknown): Reply => ({
    status,
    headers: { 'content-type': 'application/json;charset=UTF-8' },
    body: JSON.stringify(body),
  });
  const methodNotAllowed = (method: string, allowed: string) =>
    apiError(405, 'METHOD_NOT_ALLOWED', `HTTP Method '${method}' not allowed. Allowed are ${allowed}`);
  function parseJson(raw: Buffer): unknown {
    const text = raw.toString('utf8');
    try {
      return JSON.parse(text);
    } catch (err) {
      throw apiError(400, 'JSON_PARSER_ERROR', `Unexpected character in the request body: ${(err as Error).message}`);
    }
  }

  function limits(): Record<string, { Max: number; Remaining: number }> {
    const { DailyBulkApiRequests: _old, ...rest } = limitsFixture;
    return {
      ...rest,
      DailyApiRequests: { Max: usage.max, Remaining: Math.max(0, usage.max - usage.used) },
      DailyBulkApiBatches: { Max: batchUsage.max, Remaining: Math.max(0, batchUsage.max - batchUsage.used) },
      DailyBulkV2QueryFileStorageMB: { Max: 976562, Remaining: 976562 },
      DailyBulkV2QueryJobs: { Max: 10000, Remaining: 10000 },
    };
  }

  function upsertCollection(d: SObjectDescribe, extName: string, version: string, raw: Buffer): Reply {
    if (Number(version) < 46) throw notFound();
    const ext = fieldOf(d, extName);
    if (!ext)
      throw apiError(404, 'NOT_FOUND', `Provided external ID field does not exist or is not accessible: ${extName}`);
    if (!ext.externalId && !ext.idLookup)
      throw apiError(
        400,
        'INVALID_FIELD',
        `Field name provided, ${ext.name} is not an External ID or indexed field for ${d.name}`,
      );
    const body = parseJson(raw) as { allOrNone?: unknown; records?: unknown };
    if (!body || typeof body !== 'object' || !Array.isArray(body.records))
      throw apiError(400, 'INVALID_FIELD', "The 'records' field is required");
    const records = body.records as Record<string, unknown>[];
    if (records.length > 200)
      throw apiError(
        400,
        'EXCEEDED_ID_LIMIT',
        'record limit reached. cannot submit more than 200 records into this call',
      );
    const items = records.map((record) => {
      const type = (record?.attributes as { type?: unknown } | undefined)?.type;
      if (typeof type !== 'string' || lower(type) !== lower(d.name))
        throw apiError(
          400,
          'INVALID_TYPE',
          `Records in a PATCH to /composite/sobjects/${d.name}/${ext.name} must all have attributes.type ${d.name}`,
        );
      const changes = changesFromJson(d, record);
      const value = changes.get(ext.name);
      return { ext: value === null || value === undefined ? undefined : String(value), changes };
    });
    const plans = planUpsert(d, ext, items);
    const allOrNone = body.allOrNone === true;
    const anyFailed = plans.some((p) => !p.ok);
    if (allOrNone && anyFailed)
      return json(
        200,
        plans.map((p) =>
          p.ok
            ? { id: p.existing?.Id ?? null, success: false, errors: [ROLLED_BACK], created: false }
            : { id: p.id, success: false, errors: [p.error], created: false },
        ),
      );
    return json(
      200,
      plans.map((p) => {
        if (!p.ok) return { id: p.id, success: false, errors: [p.error], created: false };
        const saved = save(d, p.record, p.existing);
        return { id: saved.Id, success: true, errors: [], created: !p.existing };
      }),
    );
  }

  function rest(method: string, path: string, version: string, req: IncomingMessage, raw: Buffer): Reply {
    const [first, ...after] = path.split('/');
    if (first === undefined || first === '') {
      if (method !== 'GET') throw methodNotAllowed(method, 'GET');
      const base = `/services/data/v${version}`;
      return json(200, {
        sobjects: `${base}/sobjects`,
        limits: `${base}/limits`,
        composite: `${base}/composite`,
        jobs: `${base}/jobs`,
        identity: `${fake.url}/id/${orgId}/${userId}`,
      });
    }
    if (first === 'limits' && after.every((p) => p === '')) {
      if (method !== 'GET') throw methodNotAllowed(method, 'GET');
      return json(200, limits());
    }
    if (first === 'jobs' && after[0] === 'ingest') return ingest(method, after.slice(1), version, req, raw);
    if (first === 'sobjects') {
      const [type, second, third, ...extra] = after;
      if (type === undefined || type === '') {
        if (method !== 'GET') throw methodNotAllowed(method, 'GET');
        return json(200, {
          encoding: 'UTF-8',
          maxBatchSize: 200,
          sobjects: [...describes.values()].map(({ fields: _fields, ...summary }) => ({
            ...summary,
            urls: describeUrls(summary.name, version),
          })),
        });
      }
      const d = sobjectOf(type);
      if (!d) throw notFound();
      if (extra.length > 0) throw notFound();
      if (second === undefined || second === '') {
        if (method !== 'GET') throw methodNotAllowed(method, 'GET');
        const { fields: _fields, ...summary } = d;
        return json(200, { objectDescribe: { ...summary, urls: describeUrls(d.name, version) }, recentItems: [] });
      }
      if (second === 'describe' && (third === undefined || third === '')) {
        if (method !== 'GET') throw methodNotAllowed(method, 'GET');
        return json(200, { ...d, urls: describeUrls(d.name, version) });
      }
      if (third === undefined) {
        if (method !== 'GET') throw methodNotAllowed(method, 'GET,PATCH,DELETE');
        const record = recordsOf(d).get(second);
        if (!record) throw notFound();
        return json(200, recordJson(d, record, version));
      }
      const ext = fieldOf(d, second);
      if (!ext)
        throw apiError(404, 'NOT_FOUND', `Provided external ID field does not exist or is not accessible: ${second}`);
      const value = decodeURIComponent(third);
      if (method === 'GET') {
        const record = findByExternalId(d, ext, value);
        if (!record) throw notFound();
        return json(200, recordJson(d, record, version));
      }
      if (method !== 'PATCH') throw methodNotAllowed(method, 'GET,PATCH');
      if (!ext.externalId && !ext.idLookup)
        throw apiError(
          400,
          'INVALID_FIELD',
          `Field name provided, ${ext.name} is not an External ID or indexed field for ${d.name}`,
        );
      const body = parseJson(raw);
      if (!body || typeof body !== 'object' || Array.isArray(body))
        throw apiError(400, 'JSON_PARSER_ERROR', 'Request body is not a JSON object');
      const changes = changesFromJson(d, body as Record<string, unknown>);
      changes.set(ext.name, value);
      const [plan] = planUpsert(d, ext, [{ ext: value, changes }]);
      if (!plan) throw notFound();
      if (!plan.ok)
        throw apiError(
          400,
          plan.error.statusCode,
          plan.error.message,
          plan.error.fields.length ? plan.error.fields : [],
        );
      const saved = save(d, plan.record, plan.existing);
      if (!plan.existing) return json(201, { id: saved.Id, success: true, errors: [], created: true });
      if (Number(version) >= 46) return json(200, { id: saved.Id, success: true, errors: [], created: false });
      return { status: 204, headers: {}, body: '' };
    }
    if (first === 'composite' && after[0] === 'sobjects' && after.length === 3) {
      const d = sobjectOf(after[1] ?? '');
      if (!d) throw notFound();
      if (method !== 'PATCH') throw methodNotAllowed(method, 'PATCH');
      return upsertCollection(d, after[2] ?? '', version, raw);
    }
    throw notFound();
  }

  const describeUrls = (name: string, version: string) => ({
    sobject: `/services/data/v${version}/sobjects/${name}`,
    describe: `/services/data/v${version}/sobjects/${name}/describe`,
    rowTemplate: `/services/data/v${version}/sobjects/${name}/{ID}`,
  });

  // ---- HTTP ---------------------------------------------------------------------------------------

  async function route(req: IncomingMessage, url: URL, entry: LoggedRequest): Promise<Reply> {
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const path = url.pathname;
    if (path === '/services/oauth2/authorize') {
      if (method !== 'GET' && method !== 'POST') throw new ApiError(405, 'Method Not Allowed');
      return authorize(url);
    }
    if (path === '/services/oauth2/token') {
      if (method !== 'POST') throw oauthError('invalid_request', 'must use HTTP POST');
      const form = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')
        ? new URLSearchParams(raw.toString('utf8'))
        : new URLSearchParams();
      entry.grantType = form.get('grant_type') ?? undefined;
      const answer = token(form);
      const reply = json(200, answer);
      reply.headers['cache-control'] = 'no-cache,must-revalidate,max-age=0,no-store,private';
      return reply;
    }
    if (path === '/services/oauth2/revoke') {
      const form = new URLSearchParams(method === 'POST' ? raw.toString('utf8') : url.search);
      revoke(form);
      return { status: 200, headers: {}, body: '' };
    }
    if (path === '/setup/secur/RemoteAccessErrorPage.apexp') {
      const error = url.searchParams.get('error') ?? '';
      return {
        status: 200,
        headers: { 'content-type': 'text/html;charset=UTF-8' },
        body: `<html><body><p>We can't authorize you because of an OAuth error. For more information, contact your Salesforce administrator.</p><p>${error}</p></body></html>`,
      };
    }
    const identity = /^\/id\/([^/]+)\/([^/]+)\/?$/.exec(path);
    if (identity) {
      const presented = session(req, url);
      if (!presented) throw new ApiError(403, 'Bad_OAuth_Token', { 'content-type': 'text/plain' });
      if (identity[1] !== orgId || identity[2] !== userId) throw new ApiError(404, 'Bad_Id');
      return json(200, {
        id: `${fake.url}/id/${orgId}/${userId}`,
        asserted_user: true,
        user_id: userId,
        organization_id: orgId,
        username: 'leadgate-test@example.com',
        display_name: 'Leadgate Test',
        email: 'leadgate-test@example.com',
        active: true,
        user_type: 'STANDARD',
        language: 'en_US',
        locale: 'en_US',
        utcOffset: 0,
        urls: { rest: `${fake.url}/services/data/v{version}/`, limits: `${fake.url}/services/data/v{version}/limits` },
      });
    }
    if (path === '/services/data' || path === '/services/data/') {
      const versions = [];
      for (let v = MIN_VERSION; v <= MAX_VERSION; v++)
        versions.push({ label: `v${v}.0`, url: `/services/data/v${v}.0`, version: `${v}.0` });
      return json(200, versions);
    }
    const api = /^\/services\/data\/v(\d+\.\d)(\/.*)?$/.exec(path);
    if (!api) throw notFound();
    const version = api[1] as string;
    const major = Number(version);
    if (!version.endsWith('.0') || major < MIN_VERSION || major > MAX_VERSION) throw notFound();
    const presented = session(req, url);
    if (!presented)
      throw new ApiError(401, [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }], {
        'www-authenticate': 'Token',
      });
    entry.token = presented;
    if (usage.used >= usage.max) throw apiError(403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.');
    usage.used += 1;
    entry.counted = true;
    if (/\/jobs\/ingest\/[^/]+\/batches\/?$/.test(path)) entry.bytes = raw.length;
    return rest(method, (api[2] ?? '/').slice(1), version, req, raw);
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', fake.url);
    const entry: LoggedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.search,
      status: 0,
      counted: false,
    };
    requests.push(entry);
    let reply: Reply;
    try {
      reply = await route(req, url, entry);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const text = typeof err.body === 'string' ? err.body : JSON.stringify(err.body);
      reply = {
        status: err.status,
        headers: {
          'content-type': typeof err.body === 'string' ? 'text/plain;charset=UTF-8' : 'application/json;charset=UTF-8',
          ...err.headers,
        },
        body: text,
      };
    }
    if (entry.counted) reply.headers['sforce-limit-info'] = `api-usage=${usage.used}/${usage.max}`;
    entry.status = reply.status;
    res.writeHead(reply.status, reply.headers);
    res.end(reply.body);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json;charset=UTF-8' });
      res.end(JSON.stringify([{ errorCode: 'UNKNOWN_EXCEPTION', message: String(err) }]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeSalesforce = {
    url: `http://127.0.0.1:${port}`,
    apps,
    orgId,
    userId,
    describes,
    records(sobject) {
      const d = sobjectOf(sobject);
      return d ? [...recordsOf(d).values()] : [];
    },
    findByExternalId(sobject, field, value) {
      const d = sobjectOf(sobject);
      const f = d ? fieldOf(d, field) : undefined;
      return d && f ? findByExternalId(d, f, value) : undefined;
    },
    jobs,
    requests,
    apiUsage: () => ({ ...usage }),
    setApiUsage(used, max = usage.max) {
      usage.used = used;
      usage.max = max;
    },
    exhaustDailyAllowance() {
      usage.used = usage.max;
    },
    expireAccessTokens() {
      for (const access of accessTokens.values()) access.expiresAt = 0;
    },
    expireRefreshTokens() {
      for (const refresh of refreshTokens.values()) refresh.revoked = true;
    },
    jobPolls: { ...(options.jobPolls ?? { uploadComplete: 1, inProgress: 1 }) },
    failJob(jobId, message = DEFAULT_FAILURE, afterBatches = 0) {
      const job = jobs.get(jobId);
      if (!job) throw new Error(`no job ${jobId}`);
      job.failure = { message, afterBatches };
    },
    failNextJob(message = DEFAULT_FAILURE, afterBatches = 0) {
      nextJobFailure = { message, afterBatches };
    },
    async consent(authorizationUrl) {
      const res = await fetch(authorizationUrl, { redirect: 'manual' });
      await res.arrayBuffer();
      const location = res.headers.get('location');
      if (res.status !== 302 || !location) throw new Error(`the authorize endpoint answered ${res.status}`);
      return new URL(location, fake.url);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
