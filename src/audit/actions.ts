import type { AuditAction } from '../../db/tables/audit.ts';
import type { Role } from '../../db/tables/identity.ts';

/**
 * The audit log's actions: what each means in words (GraphQL, the console, exports) and the details
 * each carries. Details are facts for people reviewing the log: never a secret (a token, a key), and
 * for the privacy actions never a raw identifier of a person in the data — a keyed hash
 * (`personHash`, audit.ts) or a count.
 */

/**
 * A download or export of more rows than this leaves an event (`run.downloaded`, `pipeline.downloaded`,
 * `dataset.exported`); smaller files, and reading rows page by page (GraphQL's `results`, MCP's
 * `download_results`), do not. The one place the number is stated.
 */
export const DOWNLOAD_AUDIT_ROWS = 1_000;

/** The actions of the operator's privacy work: `src/privacy` records them (docs/audit.md). */
export const PRIVACY_ACTIONS = [
  'privacy.opt_out',
  'privacy.erasure',
  'privacy.access_request',
  'privacy.drop_cycle',
  'privacy.suppression_removed',
] as const satisfies readonly AuditAction[];
export type PrivacyAction = (typeof PRIVACY_ACTIONS)[number];

export const isPrivacyAction = (action: AuditAction): action is PrivacyAction =>
  (PRIVACY_ACTIONS as readonly string[]).includes(action);

type FileFormat = 'csv' | 'json' | 'ndjson' | 'xlsx';

/** The filter an export was made with, as its event keeps it (ISO times). */
export interface AuditFilterDetails {
  action?: AuditAction;
  actorId?: string;
  since?: string;
  until?: string;
}

/**
 * What each action's `details` hold. Times are ISO strings; `personHash` is the keyed hash of a
 * normalised identifier (`personHash` in audit.ts), the same for the same person every time, so an
 * operator can answer "was this address erased?" without the log holding the address.
 */
export interface AuditDetails {
  'api_key.created': { name: string; expiresAt: string | null };
  /** By hand; the keys revoked with their creator's membership are counted by `member.removed`. */
  'api_key.revoked': { name: string };
  /** The invited address is a console user's, not a person in the data. */
  'member.invited': { email: string; role: Role };
  'invitation.revoked': { email: string; role: Role };
  'member.joined': { role: Role };
  'member.role_changed': { from: Role; to: Role };
  /** `left`: the member removed themselves. */
  'member.removed': { role: Role; revokedKeys: number; left: boolean };
  'session.signed_in': { method: 'password' | 'sign_up' | 'invitation' | 'password_reset' };
  'session.signed_out': Record<string, never>;
  /** One session of the user's ended from the console's list (target: that session). */
  'session.revoked': Record<string, never>;
  'session.revoked_all': { sessions: number };
  'connection.created': { provider: string; method: 'oauth' | 'token' };
  'connection.removed': { provider: string };
  'connection.broken': { provider: string; reason: string };
  /**
   * An agent's app allowed to act for the account over OAuth (target: its grant), or its grant changed:
   * the app's name as it registered, where it sends the browser back, what it may use.
   */
  'app.authorized': { client: string; redirectHost: string; toolsets: string[]; readOnly: boolean };
  /** A connected app's grant revoked: its tokens no longer work. */
  'app.revoked': { client: string };
  /**
   * A webhook registered: the receiver's host only (a path or query may carry the receiver's own secret,
   * as a Slack incoming webhook's does), and the events it is sent.
   */
  'webhook.created': { host: string; events: string[] };
  'webhook.deleted': { host: string };
  /** `rows`: the rows the file holds; `offset` when it starts past the first. */
  'run.downloaded': { format: FileFormat; rows: number; offset?: number };
  /** A pipeline's joined table is counted as it is read: the event is written when row N + 1 is. */
  'pipeline.downloaded': { format: FileFormat; rowsOver: number };
  'dataset.exported': { format: FileFormat; rows: number };
  'schedule.created': { taskId: string; cron: string; timezone: string; exclusive: boolean };
  /** `reason`: why the gateway paused it (actor `system`), or `Paused by hand.` */
  'schedule.paused': { taskId: string; reason: string };
  'schedule.resumed': { taskId: string };
  'schedule.deleted': { taskId: string; cron: string };
  /** The file holds the events before this one that match `filter`. */
  'audit_log.exported': { format: FileFormat; filter: AuditFilterDetails };
  /** The notice acknowledged (src/accounts/permissible-use.ts), as it read then. */
  'account.permissible_use_acknowledged': { notice: string };
  /** A person confirmed an opt-out on the public page: `kind` of identifier, its hash, rows erased. */
  'privacy.opt_out': { kind: string; personHash: string; erased: number };
  /**
   * An operator's erasure: the receipt (target `privacy_request`), the identifier's kind and hash, and
   * what was removed, counted: catalog rows, stored run rows, dataset identities turned into suppression
   * entries.
   */
  'privacy.erasure': {
    kind: string;
    personHash: string;
    catalogRows: number;
    runRows: number;
    datasetIdentities: number;
  };
  /** An access request answered: the receipt (target `privacy_request`), kind, hash, records found. */
  'privacy.access_request': { kind: string; personHash: string; records: number };
  /** A DROP cycle (target `drop_cycle`): its file and the counts of its response. */
  'privacy.drop_cycle': {
    fileName: string;
    workItems: number;
    deleted: number;
    optedOut: number;
    exempted: number;
    notFound: number;
    recordsDeleted: number;
  };
  /** An account's do-not-contact entry taken off (target `suppression`): its kind and the value's hash. */
  'privacy.suppression_removed': { kind: string; personHash: string };
}

/** Each action in words, as the console and the exports show it. */
export const ACTION_TEXT: Record<AuditAction, string> = {
  'api_key.created': 'API key created',
  'api_key.revoked': 'API key revoked',
  'member.invited': 'Member invited',
  'invitation.revoked': 'Invitation withdrawn',
  'member.joined': 'Invitation accepted',
  'member.role_changed': 'Member’s role changed',
  'member.removed': 'Member removed',
  'session.signed_in': 'Signed in',
  'session.signed_out': 'Signed out',
  'session.revoked': 'Session ended',
  'session.revoked_all': 'Signed out everywhere',
  'connection.created': 'Provider connected',
  'connection.removed': 'Provider disconnected',
  'connection.broken': 'Connection broken',
  'app.authorized': 'App connected',
  'app.revoked': 'App disconnected',
  'webhook.created': 'Webhook added',
  'webhook.deleted': 'Webhook deleted',
  'run.downloaded': 'Run downloaded',
  'pipeline.downloaded': 'Pipeline table downloaded',
  'dataset.exported': 'Dataset exported',
  'schedule.created': 'Schedule created',
  'schedule.paused': 'Schedule paused',
  'schedule.resumed': 'Schedule resumed',
  'schedule.deleted': 'Schedule deleted',
  'audit_log.exported': 'Audit log exported',
  'account.permissible_use_acknowledged': 'Permissible use acknowledged',
  'privacy.opt_out': 'Person opted out',
  'privacy.erasure': 'Person’s data erased',
  'privacy.access_request': 'Access request answered',
  'privacy.drop_cycle': 'DROP deletion cycle',
  'privacy.suppression_removed': 'Do-not-contact entry removed',
};
