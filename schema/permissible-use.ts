import type { PermissibleUse } from '../src/accounts/permissible-use.ts';
import { acknowledgeAccountPermissibleUse, getPermissibleUse } from '../src/endpoints/api/permissible-use.ts';
import { graphqlFieldOf } from '../src/endpoints/define.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { builder } from './builder.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';

/**
 * Permissible use of the tools about individuals (src/accounts/permissible-use.ts): the notice, whether the
 * account has acknowledged it, and the mutation that does, through the same declarations as REST and MCP.
 */

const PermissibleUseRef = builder.objectRef<PermissibleUse>('PermissibleUse').implement({
  description:
    'Criminal records and people-finder results are not for regulated purposes; their starts are refused with ' +
    'PERMISSIBLE_USE_REQUIRED until the account acknowledges it (`acknowledgePermissibleUse`).',
  fields: (t) => ({
    notice: t.exposeString('notice', { description: 'What the account acknowledges.' }),
    acknowledged: t.boolean({ description: 'Whether it has.', resolve: (p) => p.acknowledgedAt !== null }),
    acknowledgedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When; null until acknowledged.',
      resolve: (p) => p.acknowledgedAt,
    }),
  }),
});

builder.queryField(graphqlFieldOf(getPermissibleUse), (t) =>
  t.field({
    type: PermissibleUseRef,
    description: 'The notice on the tools about individuals, and whether the account has acknowledged it.',
    resolve: async (_, __, ctx) =>
      (
        await callEndpoint(ctx.core, ctx.principal, getPermissibleUse, undefined, {
          shape: (p: PermissibleUse) => p,
        })
      ).body,
  }),
);

type AcknowledgePayload = { permissibleUse?: PermissibleUse; userErrors: UserError[] };
const AcknowledgePayloadRef = builder.objectRef<AcknowledgePayload>('AcknowledgePermissibleUsePayload').implement({
  description: 'What `acknowledgePermissibleUse` answers.',
  fields: (t) => ({
    permissibleUse: t.field({
      type: PermissibleUseRef,
      nullable: true,
      description: 'The account’s state after it.',
      resolve: (p) => p.permissibleUse ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(acknowledgeAccountPermissibleUse), (t) =>
  t.field({
    type: AcknowledgePayloadRef,
    description:
      'Acknowledges, once for the account, that criminal records and people-finder results will not be used ' +
      'for employment, tenant screening or any other regulated purpose; recorded with who and when, and in the ' +
      'audit log. Their starts are refused until then.',
    resolve: (_, __, ctx) =>
      mutationPayload(async () => ({
        permissibleUse: (
          await callEndpoint(ctx.core, ctx.principal, acknowledgeAccountPermissibleUse, undefined, {
            shape: (p: PermissibleUse) => p,
          })
        ).body,
      })),
  }),
);
