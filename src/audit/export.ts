/**
 * Exporting an account's audit log as a file (CSV, JSON, NDJSON or XLSX), newest first, by the same filter as
 * the list. An export is itself an event (`audit_log.exported`), written before the first byte; the
 * file holds the matching events before it. With a key (REST), or for the console through a signed
 * link made by `exportAuditLog` (GraphQL), signed as the run downloads' links are (download-links.ts)
 * over the filter and who asked for it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Database } from '../../db/client.ts';
import { escapeFormula } from '../../db/csv-cells.ts';
import type { AuditEventRow } from '../../db/tables/audit.ts';
import { getInstallationSecret } from '../accounts/installation.ts';
import { membershipOf } from '../accounts/members.ts';
import type { Principal } from '../accounts/principal.ts';
import { requireRole, roleMay } from '../accounts/roles.ts';
import type { Core } from '../core.ts';
import { CONTENT_TYPES, downloadParams, type ExportFormat, opened } from '../runs/exports.ts';
import { xlsxStream } from '../runs/xlsx.ts';
import { DOWNLOAD_LINK_SECS } from '../runs/download-links.ts';
import { AppError } from '../shared/errors.ts';
import { parseParams } from '../shared/params.ts';
import { ACTION_TEXT } from './actions.ts';
import { actorOf, actorOfId, type AuditActor, type AuditClient, recordAudit } from './audit.ts';
import {
  type AuditFilter,
  auditEventView,
  auditFilterParams,
  checkFilter,
  filterDetails,
  filterOfParams,
  selectAuditEvents,
} from './log.ts';

/** The id the download route (`/api/downloads/<id>`) knows the audit log's file by. */
export const AUDIT_LOG_FILE = 'audit-log';

/** Who exports: the account and the actor and client its event names. */
export interface Exporter {
  accountId: string;
  actor: AuditActor;
  client?: AuditClient | null;
}

const BATCH = 500;

async function* eventsOf(db: Database, accountId: string, filter: AuditFilter): AsyncGenerator<AuditEventRow> {
  let after: bigint | undefined;
  for (;;) {
    const page = await selectAuditEvents(db, { accountId }, filter, { first: BATCH, after });
    yield* page.events;
    const last = page.events.at(-1);
    if (!page.hasNextPage || !last) return;
    after = last.id;
  }
}

const CSV_COLUMNS = [
  'id',
  'time',
  'action',
  'action_text',
  'actor_type',
  'actor_id',
  'actor',
  'target_type',
  'target_id',
  'target',
  'details',
  'ip',
  'user_agent',
] as const;

const csvCell = (value: string | null) => (value === null ? '' : escapeFormula(value));
// A sheet's text cell is never run as a formula: XLSX keeps the text as it is.
const sheetCell = (value: string | null) => value ?? '';

/** An event as a row of the CSV or XLSX file; `cell` writes its free text. */
function csvRecord(e: AuditEventRow, cell = csvCell): Record<(typeof CSV_COLUMNS)[number], string> {
  return {
    id: String(e.id),
    time: e.createdAt.toISOString(),
    action: e.action,
    action_text: ACTION_TEXT[e.action],
    actor_type: e.actorType,
    actor_id: cell(e.actorId),
    actor: cell(e.actorLabel),
    target_type: e.targetType ?? '',
    target_id: cell(e.targetId),
    target: cell(e.targetLabel),
    details: cell(JSON.stringify(e.details)),
    ip: cell(e.ip),
    user_agent: cell(e.userAgent),
  };
}

async function* jsonChunks(events: AsyncIterable<AuditEventRow>, format: 'json' | 'ndjson'): AsyncGenerator<string> {
  let first = true;
  for await (const e of events) {
    const line = JSON.stringify(auditEventView(e));
    yield format === 'json' ? `${first ? '[' : ','}\n${line}` : `${line}\n`;
    first = false;
  }
  if (format === 'json') yield first ? '[]\n' : '\n]\n';
}

/**
 * The account's events matching `filter` as a file in `format`, once its first bytes are ready; the
 * export's own event is recorded first, and the file holds the matching events before it.
 */
export async function exportAuditLog(db: Database, who: Exporter, filter: AuditFilter, format: ExportFormat) {
  const eventId = await recordAudit(db, {
    accountId: who.accountId,
    actor: who.actor,
    client: who.client,
    action: 'audit_log.exported',
    target: { type: 'audit_log', id: who.accountId },
    details: { format, filter: filterDetails(filter) },
  });
  const events = eventsOf(db, who.accountId, { ...filter, beforeId: eventId });
  let body: Readable;
  if (format === 'xlsx') {
    const records = (async function* () {
      for await (const e of events) yield csvRecord(e, sheetCell);
    })();
    body = xlsxStream(
      records,
      CSV_COLUMNS.map((key) => ({ key, header: key })),
      'Audit log',
    );
  } else if (format === 'csv') {
    const records = Readable.from(
      (async function* () {
        for await (const e of events) yield csvRecord(e);
      })(),
    );
    body = pipeline(records, stringify({ header: true, columns: [...CSV_COLUMNS] }), () => {});
  } else {
    body = Readable.from(jsonChunks(events, format));
  }
  return opened({ body, contentType: CONTENT_TYPES[format], fileName: `audit-log-${who.accountId}.${format}` });
}

/** The query of an export: the list's filter and the format. */
export const auditExportParams = auditFilterParams.extend({ format: downloadParams.shape.format }).strict();

/** An export for a caller with a key (REST): its role allows reading the log, the query is the filter. */
export async function openAuditExport(core: Pick<Core, 'db'>, principal: Principal, query: unknown) {
  requireRole(principal, 'audit');
  const { format, ...filter } = parseParams(auditExportParams, query);
  const who = { accountId: principal.accountId, actor: actorOf(principal), client: principal.client ?? null };
  return exportAuditLog(core.db, who, filterOfParams(filter), format);
}

interface ExportLink {
  accountId: string;
  by: string;
  format: ExportFormat;
  filter: AuditFilter;
  /** Unix seconds. */
  expires: number;
}

const signatureOf = (secret: Buffer, link: ExportLink) =>
  createHmac('sha256', secret)
    .update(
      [
        'audit-log',
        link.accountId,
        link.by,
        link.format,
        link.filter.action ?? '',
        link.filter.actorId ?? '',
        link.filter.since?.toISOString() ?? '',
        link.filter.until?.toISOString() ?? '',
        String(link.expires),
      ].join('\n'),
    )
    .digest('base64url');

/**
 * A signed link to the caller's account's log in `format`, by `filter` (checked), as a path on this
 * server, valid DOWNLOAD_LINK_SECS: what GraphQL's `exportAuditLog` answers. Owners and admins.
 */
export async function signAuditExport(
  core: Pick<Core, 'db' | 'clock'>,
  principal: Principal,
  filter: AuditFilter,
  format: ExportFormat,
): Promise<{ path: string; expiresAt: Date }> {
  requireRole(principal, 'audit');
  const by = actorOf(principal).id;
  if (!by) throw new Error('a caller without an id asked for an export link');
  const expires = Math.floor(core.clock().getTime() / 1000) + DOWNLOAD_LINK_SECS;
  const link: ExportLink = { accountId: principal.accountId, by, format, filter: checkFilter(filter), expires };
  const params = new URLSearchParams({ format, account: link.accountId, by });
  for (const [name, value] of Object.entries(filterDetails(link.filter)))
    params.set(name === 'actorId' ? 'actor' : name, value as string);
  params.set('expires', String(expires));
  params.set('signature', signatureOf(await getInstallationSecret(core.db), link));
  return { path: `/api/downloads/${AUDIT_LOG_FILE}?${params}`, expiresAt: new Date(expires * 1000) };
}

const badLink = () =>
  new AppError(401, 'unauthenticated', 'This export link is invalid or has expired; export the audit log again.');

/**
 * The export a signed link opens: 401 for a link this installation did not sign or that has expired,
 * or whose user may no longer read the log (removed, or made a member, since it was made). A key's or
 * app's link is checked when it is made, as a run's is.
 */
export async function openSignedAuditExport(
  core: Pick<Core, 'db' | 'clock'>,
  query: Record<string, unknown>,
  client: AuditClient,
) {
  const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
  const { signature, account, by } = { signature: text('signature'), account: text('account'), by: text('by') };
  if (!signature || !account || !by) throw badLink();
  const signed = new Set(['account', 'by', 'expires', 'signature']);
  const { format, ...filterParams } = parseParams(
    auditExportParams,
    Object.fromEntries(Object.entries(query).filter(([name]) => !signed.has(name))),
  );
  const link: ExportLink = {
    accountId: account,
    by,
    format,
    filter: filterOfParams(filterParams),
    expires: Number(text('expires')),
  };
  const expected = Buffer.from(signatureOf(await getInstallationSecret(core.db), link));
  const given = Buffer.from(signature);
  const now = core.clock().getTime();
  if (!Number.isSafeInteger(link.expires) || link.expires * 1000 <= now) throw badLink();
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw badLink();
  const actor = actorOfId(by);
  if (actor.type === 'user') {
    const membership = await membershipOf(core.db, account, by);
    if (!membership || !roleMay(membership.role, 'audit')) throw badLink();
  }
  return exportAuditLog(core.db, { accountId: account, actor, client }, link.filter, format);
}
