import { z } from 'zod';
import { SUPPRESSION_KINDS, SUPPRESSION_SOURCES } from '../../../db/tables/privacy.ts';
import {
  addToAccountList,
  listAccountList,
  MAX_ENTRIES,
  removeFromAccountList,
  suppressionInput,
  suppressionView,
} from '../../privacy/lists.ts';
import { defineEndpoint, type RestRequest } from '../define.ts';

const SUPPRESSIONS = '/api/v1/suppressions';

const entryView = z
  .object({
    id: z.string().describe('sup_…'),
    kind: z.enum(SUPPRESSION_KINDS),
    value: z.string().describe('As compared: an e-mail in lower case, a phone in E.164, a profile URL without scheme.'),
    source: z
      .enum(SUPPRESSION_SOURCES)
      .describe('account (added here), or opt_out (the person asked, through the gateway).'),
    note: z.string().nullable(),
    createdAt: z.string(),
  })
  .strict();

export const addAccountSuppressions = defineEndpoint({
  name: 'addSuppressions',
  title: 'Add people to the do-not-contact list',
  tag: 'Privacy',
  graphql: { field: 'addToDoNotContact' },
  description:
    'Rows carrying any of these e-mails (or addresses at these domains), phone numbers or profile URLs are ' +
    'dropped from every run, search and enrichment of the account from now on: not returned, not billed. ' +
    `At most ${MAX_ENTRIES} entries an add; anyone in the account may add.`,
  rest: {
    path: SUPPRESSIONS,
    methods: ['post'],
    input: (request) => request.body,
    example: { entries: [{ kind: 'email', value: 'jane@acme.com' }], note: 'asked by reply' },
    ok: 'How many were added, and how many were listed already.',
  },
  mcp: {
    tool: 'add_to_do_not_contact',
    toolset: 'privacy',
    title: 'Add to the do-not-contact list',
    description: [
      'People who asked not to be contacted: no run, search or enrichment of the account returns rows about them.',
    ],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  request: suppressionInput,
  response: z.object({ added: z.int(), alreadyListed: z.int() }).strict(),
  errors: { 400: ['validation_failed'] },
  handler: ({ core, principal }, body: unknown) => addToAccountList(core.db, principal, body),
  respond: (answer) => answer,
});

export const listAccountSuppressions = defineEndpoint({
  name: 'listSuppressions',
  title: 'The do-not-contact list',
  tag: 'Privacy',
  graphql: { field: 'doNotContact' },
  rest: {
    path: SUPPRESSIONS,
    methods: ['get'],
    input: (request: RestRequest) => String((request.query as { before?: unknown } | undefined)?.before ?? ''),
    ok: 'Newest first, 100 a page; `before` the last id of a page reads the next.',
  },
  mcp: {
    tool: 'list_do_not_contact',
    toolset: 'privacy',
    title: 'The do-not-contact list',
    description: ['The account’s entries, newest first, 100 a page.'],
    args: z.object({ before: z.string().max(64).optional().describe('The last id of the page before.') }).strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  response: z.object({ entries: z.array(entryView) }).strict(),
  errors: {},
  handler: ({ core, principal }, input: string | { before?: string }) =>
    listAccountList(core.db, principal.accountId, typeof input === 'string' ? input : input?.before),
  respond: (entries) => ({ entries: entries.map(suppressionView) }),
});

export const removeAccountSuppression = defineEndpoint({
  name: 'removeSuppression',
  title: 'Take an entry off the do-not-contact list',
  tag: 'Privacy',
  graphql: { field: 'removeFromDoNotContact' },
  description: 'Owners and admins; an entry a person made through the opt-out page stays.',
  permission: 'suppressions',
  rest: {
    path: `${SUPPRESSIONS}/:id`,
    methods: ['delete'],
    status: 204,
    input: (request) => request.params.id ?? '',
    ok: 'Removed.',
  },
  errors: { 403: ['role_required'], 404: ['suppression_not_found'], 409: ['suppression_kept'] },
  handler: ({ core, principal }, id: string) => removeFromAccountList(core.db, principal, id),
});
