import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Core } from '../core.ts';
import { getInstallationSecret } from '../accounts/installation.ts';
import type { Principal } from '../accounts/principal.ts';
import { actorOf } from '../audit/audit.ts';
import { assertDownloadable, type ExportFormat } from './exports.ts';
import { getRun } from './read.ts';
import { isTerminal, type RunSnapshot } from './view.ts';

/**
 * Short-lived signed links to a run's file, for callers without a key (the console's session): the
 * download route accepts `account`, `expires` and `signature` in place of a key. The signature is an
 * HMAC-SHA256, under the installation's secret, of the account, run, format and expiry, and of who asked
 * for it (`by`: the user, key or app, named in the audit log's event of a large download), so a link
 * opens one file of one run until it expires and cannot be changed into another or be said to be
 * someone else's. A link without `by` (a Slack summary's) names no one.
 */

/** How long a link works: enough to click it, too short to share usefully. */
export const DOWNLOAD_LINK_SECS = 300;

export interface DownloadLink {
  accountId: string;
  runId: string;
  format: ExportFormat;
  /** Unix seconds. */
  expires: number;
  /** Who asked for the link: a user (`usr_…`), key (`key_…`) or app (`oag_…`) id. */
  by?: string;
}

const signatureOf = (secret: Buffer | string, link: DownloadLink) =>
  createHmac('sha256', secret)
    .update(
      `download\n${link.accountId}\n${link.runId}\n${link.format}\n${link.expires}${link.by ? `\n${link.by}` : ''}`,
    )
    .digest('base64url');

/** The query string of a link to `runId`'s file in `format`, valid DOWNLOAD_LINK_SECS from `now`. */
export function signDownload(secret: Buffer | string, link: Omit<DownloadLink, 'expires'>, now: Date): string {
  const expires = Math.floor(now.getTime() / 1000) + DOWNLOAD_LINK_SECS;
  const params = new URLSearchParams({ format: link.format, account: link.accountId, expires: String(expires) });
  if (link.by) params.set('by', link.by);
  params.set('signature', signatureOf(secret, { ...link, expires }));
  return params.toString();
}

/**
 * The query string of a link that works until `until` (a Slack summary's link lasts as long as the
 * rows it opens).
 */
export function signDownloadUntil(secret: Buffer | string, link: Omit<DownloadLink, 'expires'>, until: Date): string {
  const expires = Math.floor(until.getTime() / 1000);
  const params = new URLSearchParams({ format: link.format, account: link.accountId, expires: String(expires) });
  params.set('signature', signatureOf(secret, { ...link, expires }));
  return params.toString();
}

/** Whether `signature` signs `link` and the link has not expired. */
export function verifyDownload(secret: Buffer | string, link: DownloadLink, signature: string, now: Date): boolean {
  if (!Number.isSafeInteger(link.expires) || link.expires * 1000 <= now.getTime()) return false;
  const expected = Buffer.from(signatureOf(secret, link));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * A signed link to the run's file as a path and query on this server (`/api/downloads/<runId>?…`), or
 * null before the run ends; refused with RESULTS_EXPIRED once its rows are deleted.
 */
export async function signedDownloadPath(
  core: Pick<Core, 'db' | 'clock'>,
  signer: Principal,
  run: RunSnapshot,
  format: ExportFormat,
): Promise<string | null> {
  if (!isTerminal(run.status)) return null;
  const { accountId } = signer;
  assertDownloadable(await getRun(core.db, accountId, run.id), core.clock());
  const link = { accountId, runId: run.id, format, by: actorOf(signer).id ?? undefined };
  const query = signDownload(await getInstallationSecret(core.db), link, core.clock());
  return `/api/downloads/${encodeURIComponent(run.id)}?${query}`;
}

/**
 * A signed link to the file of a pipeline's table or a dataset (`/api/downloads/<id>?…`), signed as a
 * run's: the caller has checked that the file can be made.
 */
export async function signedFilePath(
  core: Pick<Core, 'db' | 'clock'>,
  signer: Principal,
  id: string,
  format: ExportFormat,
): Promise<string> {
  const link = { accountId: signer.accountId, runId: id, format, by: actorOf(signer).id ?? undefined };
  const query = signDownload(await getInstallationSecret(core.db), link, core.clock());
  return `/api/downloads/${encodeURIComponent(id)}?${query}`;
}
