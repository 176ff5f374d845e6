import { z } from 'zod';
import { AUDIT_ACTIONS, AUDIT_ACTOR_TYPES, AUDIT_TARGET_TYPES } from '../../../db/tables/audit.ts';
import { DOWNLOAD_AUDIT_ROWS } from '../../audit/actions.ts';
import { auditEventView, auditListParams, filterOfParams, listAuditEvents } from '../../audit/log.ts';
import { parseParams } from '../../shared/params.ts';
import { defineEndpoint } from '../define.ts';

const eventView = z
  .object({
    id: z.string().describe('The event’s number; GraphQL’s AuditEvent id is `aev_<number>`.'),
    createdAt: z.string(),
    action: z.enum(AUDIT_ACTIONS),
    actionText: z.string().describe('The action in words.'),
    actor: z
      .object({
        type: z.enum(AUDIT_ACTOR_TYPES),
        id: z.string().nullable().describe('usr_…, key_… or oag_…; null for the operator, the system, a link.'),
        label: z.string().describe('Who it was as shown when it acted: an email, a key’s name and prefix.'),
      })
      .strict(),
    target: z
      .object({ type: z.enum(AUDIT_TARGET_TYPES), id: z.string(), label: z.string().nullable() })
      .strict()
      .nullable(),
    details: z.record(z.string(), z.unknown()).describe('What else the action says (docs/audit.md).'),
    ip: z.string().nullable(),
    userAgent: z.string().nullable(),
  })
  .strict();

export const listAuditLog = defineEndpoint({
  name: 'listAuditEvents',
  title: 'The audit log',
  tag: 'Audit',
  graphql: { field: 'auditLog' },
  description:
    'Who did what in the account, newest first: keys created and revoked, members invited, changed and removed, ' +
    'sign-ins and sign-outs, provider connections, downloads of more than ' +
    `${DOWNLOAD_AUDIT_ROWS.toLocaleString('en-US')} rows, schedule changes, exports of this log. Filter by action, ` +
    'actor and time. Owners and admins (and the keys they created). ' +
    'GET /api/v1/audit-events/export gives the same events as a file.',
  permission: 'audit',
  rest: {
    path: '/api/v1/audit-events',
    methods: ['get'],
    ok: 'One page of events, newest first; `next_after` (sent as `after`) reads the next until it is null.',
  },
  request: auditListParams,
  response: z.object({ events: z.array(eventView), next_after: z.string().nullable() }).strict(),
  errors: { 400: ['validation_failed'] },
  handler: ({ core, principal }, query: unknown) => {
    const { limit = 50, after, ...filter } = parseParams(auditListParams, query ?? {});
    return listAuditEvents(core.db, principal, filterOfParams(filter), {
      first: limit,
      ...(after === undefined ? {} : { after: BigInt(after) }),
    });
  },
  respond: ({ events, hasNextPage }) => {
    const last = events.at(-1);
    return { events: events.map(auditEventView), next_after: hasNextPage && last ? String(last.id) : null };
  },
});
