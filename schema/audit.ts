import {
  AUDIT_ACTIONS,
  AUDIT_ACTOR_TYPES,
  AUDIT_TARGET_TYPES,
  type AuditAction,
  type AuditActorType,
  type AuditEventRow,
  type AuditTargetType,
} from '../db/tables/audit.ts';
import { ACTION_TEXT, DOWNLOAD_AUDIT_ROWS, isPrivacyAction } from '../src/audit/actions.ts';
import { signAuditExport } from '../src/audit/export.ts';
import { type AuditFilter, checkFilter, countAuditEvents, listAuditEvents, loadAuditEvents } from '../src/audit/log.ts';
import { listAuditLog } from '../src/endpoints/api/audit.ts';
import { graphqlFieldOf } from '../src/endpoints/define.ts';
import { DOWNLOAD_LINK_SECS } from '../src/runs/download-links.ts';
import { isBigintText } from '../src/shared/params.ts';
import { builder } from './builder.ts';
import {
  AFTER_DESCRIPTION,
  bigintCursor,
  connectionOf,
  connectionType,
  FIRST_DESCRIPTION,
  pageSize,
} from './connection.ts';
import { DownloadFormatEnum } from './console.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { pageComplexity } from './identity/lists.ts';
import { globalId, NodeRef, registerNode } from './node.ts';

/**
 * The account's audit log (src/audit, docs/audit.md): who did what, newest first, for owners and admins
 * (ROLE_REQUIRED otherwise), and its export through a signed link.
 */

/** `api_key.created` as an enum value: API_KEY_CREATED. */
const enumOf = (value: string) => value.replace(/\./g, '_').toUpperCase();

const ActionEnum = builder.enumType('AuditAction', {
  description: 'What an audit event records.',
  values: Object.fromEntries(
    AUDIT_ACTIONS.map((a) => [
      enumOf(a),
      {
        value: a,
        description: `${ACTION_TEXT[a]} (\`${a}\` in REST and exports)${isPrivacyAction(a) ? ': privacy work' : ''}.`,
      },
    ]),
  ) as Record<string, { value: AuditAction; description: string }>,
});

const ACTOR_TEXT: Record<AuditActorType, string> = {
  user: 'A user signed in to the console.',
  api_key: 'An API key.',
  app: 'A connected app (an agent with the OAuth access a user allowed it).',
  operator: 'This server’s operator (the command line).',
  system: 'leadgate itself (a scheduled job, a provider refusing a connection).',
  link: 'Whoever opened a signed link that names no one (a Slack summary’s).',
};
const ActorTypeEnum = builder.enumType('AuditActorType', {
  description: 'Who acted.',
  values: Object.fromEntries(
    AUDIT_ACTOR_TYPES.map((t) => [t.toUpperCase(), { value: t, description: ACTOR_TEXT[t] }]),
  ) as Record<string, { value: AuditActorType; description: string }>,
});
const TargetTypeEnum = builder.enumType('AuditTargetType', {
  description: 'What an event acted on.',
  values: Object.fromEntries(
    AUDIT_TARGET_TYPES.map((t) => [t.toUpperCase(), { value: t, description: `A ${t.replace(/_/g, ' ')}.` }]),
  ) as Record<string, { value: AuditTargetType; description: string }>,
});

const ActorRef = builder.objectRef<AuditEventRow>('AuditActor').implement({
  description: 'Who acted, as they were shown when they did.',
  fields: (t) => ({
    type: t.field({ type: ActorTypeEnum, description: 'What kind of actor.', resolve: (e) => e.actorType }),
    id: t.string({
      nullable: true,
      description:
        'The user (`usr_…`), key (`key_…`) or app (`oag_…`), what `AuditLogFilter.actorId` takes; null for the ' +
        'operator, leadgate and a link.',
      resolve: (e) => e.actorId,
    }),
    label: t.string({
      description: 'How they were shown then: an email, a key’s name and prefix, an app and its user.',
      resolve: (e) => e.actorLabel,
    }),
  }),
});

type Target = { type: AuditTargetType; id: string; label: string | null };
const TargetRef = builder.objectRef<Target>('AuditTarget').implement({
  description: 'What an event acted on, as it was shown then (it may be gone since).',
  fields: (t) => ({
    type: t.field({ type: TargetTypeEnum, description: 'What kind of object.', resolve: (x) => x.type }),
    id: t.exposeString('id', {
      description: 'Its id (`key_…`, `mem_…`, `con_…`, a run’s id…): `node(id:)` refetches one still there.',
    }),
    label: t.exposeString('label', { nullable: true, description: 'Its name then, when it has one.' }),
  }),
});

type Detail = { name: string; value: string | null };
const DetailRef = builder.objectRef<Detail>('AuditDetail').implement({
  description: 'One fact an event keeps (docs/audit.md lists them per action). Never a secret.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'What it is (`role`, `rows`, `provider`…).' }),
    value: t.exposeString('value', {
      nullable: true,
      description: 'Its value as text: numbers in digits, lists and objects as JSON.',
    }),
  }),
});

const detailsOf = (e: AuditEventRow): Detail[] =>
  Object.entries((e.details ?? {}) as Record<string, unknown>).map(([name, value]) => ({
    name,
    value: value === null || value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value),
  }));

const PREFIX = 'aev';

const EventRef = builder.objectRef<AuditEventRow>('AuditEvent').implement({
  description: 'Something someone did in the account, as the audit log keeps it: it never changes.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.id({ description: 'The event’s global id (`aev_<number>`).', resolve: (e) => globalId(PREFIX, e.id) }),
    action: t.field({ type: ActionEnum, description: 'What happened.', resolve: (e) => e.action }),
    actionText: t.string({ description: 'What happened, in words.', resolve: (e) => ACTION_TEXT[e.action] }),
    actor: t.field({ type: ActorRef, description: 'Who did it.', resolve: (e) => e }),
    target: t.field({
      type: TargetRef,
      nullable: true,
      description: 'What it was done to; null when nothing in particular (signing out everywhere).',
      resolve: (e) =>
        e.targetType && e.targetId ? { type: e.targetType, id: e.targetId, label: e.targetLabel } : null,
    }),
    details: t.field({ type: [DetailRef], description: 'What else it says.', resolve: detailsOf }),
    ipAddress: t.exposeString('ip', {
      nullable: true,
      description: 'The client address of the request (an IPv6 address as its /64); null when no request made it.',
    }),
    userAgent: t.exposeString('userAgent', { nullable: true, description: 'The User-Agent of the request.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When it happened.', resolve: (e) => e.createdAt }),
  }),
});

// A member refetches no event (null, as for another account's).
registerNode(PREFIX, 'AuditEvent', {
  load: async (ids, ctx) => {
    const valid = ids.filter(isBigintText).map(BigInt);
    const found = await loadAuditEvents(ctx.core.db, ctx.principal, valid);
    return ids.map((id) => (isBigintText(id) ? (found[valid.indexOf(BigInt(id))] ?? null) : null));
  },
});

const FilterRef = builder.inputType('AuditLogFilter', {
  description: 'Which events: every condition given must hold.',
  fields: (t) => ({
    action: t.field({ type: ActionEnum, description: 'Only this action.' }),
    actorId: t.string({ description: 'Only what this user, key or app did (`AuditActor.id`).' }),
    since: t.field({ type: 'DateTime', description: 'From this time on (included).' }),
    until: t.field({ type: 'DateTime', description: 'Before this time (excluded).' }),
  }),
});

type FilterInput = {
  action?: AuditAction | null;
  actorId?: string | number | null;
  since?: Date | null;
  until?: Date | null;
};
const filterOf = (input: FilterInput | null | undefined): AuditFilter => ({
  ...(input?.action ? { action: input.action } : {}),
  ...(input?.actorId != null ? { actorId: String(input.actorId) } : {}),
  ...(input?.since ? { since: input.since } : {}),
  ...(input?.until ? { until: input.until } : {}),
});

const EventConnectionRef = connectionType<AuditEventRow>('AuditEvent', EventRef, {
  description: 'A page of the account’s audit log, newest first.',
  totalCount: 'How many events match the filter.',
});

builder.queryField(graphqlFieldOf(listAuditLog), (t) =>
  t.field({
    type: EventConnectionRef,
    description:
      'Who did what in the account, newest first: keys, members, sessions, provider connections, downloads of more ' +
      `than ${DOWNLOAD_AUDIT_ROWS.toLocaleString('en-US')} rows, schedules, exports of this log. Owners and admins ` +
      '(and the keys they created): ROLE_REQUIRED otherwise.',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(100, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
      filter: t.arg({ type: FilterRef, description: 'Which events; all when absent.' }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) => {
      const filter = checkFilter(filterOf(args.filter), (field) => `filter.${field}`);
      const first = pageSize(args.first, { max: 100, byDefault: 20 });
      const page = await listAuditEvents(ctx.core.db, ctx.principal, filter, {
        first,
        after: bigintCursor(args.after),
      });
      return connectionOf(page.events, {
        cursorOf: (e) => String(e.id),
        hasNextPage: page.hasNextPage,
        totalCount: () => countAuditEvents(ctx.core.db, { accountId: ctx.principal.accountId }, filter),
      });
    },
  }),
);

type ActionInfo = { action: AuditAction };
const ActionInfoRef = builder.objectRef<ActionInfo>('AuditActionInfo').implement({
  description: 'An action the audit log records, with its words (for a filter’s choices).',
  fields: (t) => ({
    action: t.field({ type: ActionEnum, description: 'The action.', resolve: (a) => a.action }),
    text: t.string({ description: 'The action in words.', resolve: (a) => ACTION_TEXT[a.action] }),
  }),
});

builder.queryField('auditActions', (t) =>
  t.field({
    type: [ActionInfoRef],
    description: 'Every action the audit log records, in words: a fixed list.',
    resolve: () => AUDIT_ACTIONS.map((action) => ({ action })),
  }),
);

type ExportPayload = { downloadPath?: string; downloadUrl?: string; expiresAt?: Date; userErrors: UserError[] };
const ExportPayloadRef = builder.objectRef<ExportPayload>('ExportAuditLogPayload').implement({
  description: 'What `exportAuditLog` answers: a signed link to the file.',
  fields: (t) => ({
    downloadPath: t.string({
      nullable: true,
      description:
        'The link as a path on this server (`/api/downloads/audit-log?…`), for pages the gateway serves, such as ' +
        `the console; it works without a key for ${DOWNLOAD_LINK_SECS / 60} minutes.`,
      resolve: (p) => p.downloadPath ?? null,
    }),
    downloadUrl: t.string({
      nullable: true,
      description: 'The same link made absolute with this server’s public address (PUBLIC_URL).',
      resolve: (p) => p.downloadUrl ?? null,
    }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the link stops working.',
      resolve: (p) => p.expiresAt ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField('exportAuditLog', (t) =>
  t.field({
    type: ExportPayloadRef,
    description:
      'A signed link to the account’s audit log as a file (CSV with a header row, a JSON array, or NDJSON), newest ' +
      'first, by `filter`. Opening it is itself an event (`AUDIT_LOG_EXPORTED`); the file holds the matching events ' +
      'before it. Owners and admins (ROLE_REQUIRED otherwise); VALIDATION_FAILED at `filter.<field>`.',
    args: {
      format: t.arg({ type: DownloadFormatEnum, required: true, description: 'The file format.' }),
      filter: t.arg({ type: FilterRef, description: 'Which events; all when absent.' }),
    },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const { path, expiresAt } = await signAuditExport(ctx.core, ctx.principal, filterOf(args.filter), args.format);
        return { downloadPath: path, downloadUrl: `${ctx.core.config.publicUrl}${path}`, expiresAt };
      }, ['filter']),
  }),
);
