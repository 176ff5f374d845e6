import { idempotent } from '../src/http/pipeline.ts';
import { prepareStart, type StartedRun } from '../src/runs/runs.ts';
import { TOOLS } from '../src/tools/index.ts';
import type { ToolDefinition } from '../src/tools/types.ts';
import { builder } from './builder.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { RunRef } from './run.ts';
import { startDetailsFields } from './start-details.ts';
import { inputTypeOf, pascal } from './zod-input.ts';

type StartPayload = Partial<StartedRun> & { userErrors: UserError[] };

const extraOf = (p: StartPayload) => (p.start?.extra ?? {}) as Record<string, unknown>;

/**
 * Every tool of the registry becomes a mutation `start<Tool>(input: Start<Tool>Input!)` answering
 * `Start<Tool>Payload`. Input types are derived from the tool's zod schema; the service validates
 * with that same schema, and its refusals become `userErrors` (paths under `input`).
 */
function defineToolMutation(tool: ToolDefinition) {
  const input = inputTypeOf(tool.input, tool.graphql.inputType, { description: `Input of ${tool.title}, as its REST start body (docs/tools.md).` });
  const payload = builder.objectRef<StartPayload>(`${pascal(tool.graphql.mutation)}Payload`).implement({
    description: `What \`${tool.graphql.mutation}\` answers: the run started, or \`userErrors\`.`,
    fields: (t) => ({
      run: t.field({ type: RunRef, nullable: true, description: 'The run started (RUNNING, or READY while the account has its maximum running).', resolve: (p) => p.run ?? null }),
      message: t.string({ nullable: true, description: 'What the run will do, for people.', resolve: (p) => p.start?.message ?? null }),
      estimatedCost: t.field({ type: 'Money', nullable: true, description: 'Estimated and held at start; the run is billed on its actual rows.', resolve: (p) => (p.run ? p.run.estimatedCost : null) }),
      webhookSecret: t.string({
        nullable: true,
        description: 'The signing secret of the run’s `webhookUrl` (whsec_…), shown only in this answer; null without a webhookUrl.',
        resolve: (p) => (extraOf(p).webhookSecret as string | undefined) ?? null,
      }),
      ...startDetailsFields(t, tool, extraOf),
      userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
    }),
  });
  builder.mutationField(tool.graphql.mutation, (t) =>
    t.field({
      type: payload,
      description: `${tool.title}. ${tool.description} Price: ${tool.price.text}.${tool.plan ? ` Needs the ${tool.plan} plan or higher (user error PLAN_REQUIRED).` : ''}`,
      args: {
        input: t.arg({ type: input.ref as never, required: true, description: 'What to run.' }),
        idempotencyKey: t.arg.string({ description: 'Replays the first answer for 24 hours; the same key with another input is refused (IDEMPOTENCY_KEY_REUSED).' }),
        webhookUrl: t.arg.string({ description: "POSTed the run's end, signed with the `webhookSecret` of this answer (shown once)." }),
      },
      resolve: (_, args, ctx) =>
        mutationPayload(async () => {
          const body = { ...(input.decode(args.input) as object), ...(args.webhookUrl ? { webhookUrl: args.webhookUrl } : {}) };
          const result = await idempotent(ctx.core, ctx.principal, args.idempotencyKey, `graphql:${tool.graphql.mutation}`, body, () =>
            prepareStart(ctx.core, ctx.principal, tool.name, body),
          );
          return result.body as StartedRun;
        }, (path) => (path[0] === 'webhookUrl' ? path : ['input', ...path])),
    }),
  );
}

for (const tool of TOOLS) if (!tool.linkedOnly) defineToolMutation(tool);
