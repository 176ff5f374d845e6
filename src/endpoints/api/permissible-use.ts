import { z } from 'zod';
import {
  acknowledgePermissibleUse,
  PERMISSIBLE_USE_NOTICE,
  PERMISSIBLE_USE_PATH,
  type PermissibleUse,
  permissibleUseOf,
} from '../../accounts/permissible-use.ts';
import { defineEndpoint } from '../define.ts';

const permissibleUseResponse = z
  .object({
    notice: z.string().describe('What the account acknowledges.'),
    acknowledged: z.boolean(),
    acknowledgedAt: z.string().nullable().describe('When, ISO 8601; null until acknowledged.'),
  })
  .strict();

const view = (p: PermissibleUse) => ({
  notice: p.notice,
  acknowledged: p.acknowledgedAt !== null,
  acknowledgedAt: p.acknowledgedAt?.toISOString() ?? null,
});

export const getPermissibleUse = defineEndpoint({
  name: 'getPermissibleUse',
  title: 'Permissible use of the tools about individuals',
  tag: 'Account',
  description:
    'Whether the account has acknowledged that criminal records and people-finder results are not for ' +
    'regulated purposes; their runs are refused until it has.',
  rest: { path: PERMISSIBLE_USE_PATH, methods: ['get'], ok: 'The notice and whether it is acknowledged.' },
  graphql: { field: 'permissibleUse' },
  response: permissibleUseResponse,
  errors: {},
  handler: ({ core, principal }) => permissibleUseOf(core.db, principal.accountId),
  respond: view,
});

export const acknowledgeAccountPermissibleUse = defineEndpoint({
  name: 'acknowledgePermissibleUse',
  title: 'Acknowledge the permissible use of the tools about individuals',
  tag: 'Account',
  description:
    `${PERMISSIBLE_USE_NOTICE} Acknowledged once for the account (who and when are recorded, and an ` +
    'audit event); criminal records and people-finder runs are refused until then.',
  rest: {
    path: PERMISSIBLE_USE_PATH,
    methods: ['post'],
    input: () => undefined,
    ok: 'Acknowledged (again: nothing changes).',
  },
  graphql: { field: 'acknowledgePermissibleUse' },
  mcp: {
    tool: 'acknowledge_permissible_use',
    toolset: 'database',
    title: 'Acknowledge permissible use',
    description: [
      PERMISSIBLE_USE_NOTICE,
      'Call once for the account, on behalf of its user and only with their agreement, before ' +
        'search_criminal_records or find_people; they are refused until then.',
    ],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  response: permissibleUseResponse,
  errors: {},
  handler: ({ core, principal }) => acknowledgePermissibleUse(core.db, principal),
  respond: view,
});
