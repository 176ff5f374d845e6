import { idempotent } from '../src/http/pipeline.ts';
import { prepareStart, type StartedRun } from '../src/runs/runs.ts';
import { TOOLS } from '../src/tools/index.ts';
import type { ToolDefinition } from '../src/tools/types.ts';
import { builder } from './builder.ts';
import { RunRef } from './run.ts';
import { inputTypeOf, withoutNulls } from './zod-input.ts';

export const StartRunPayloadRef = builder.objectRef<StartedRun>('StartRunPayload').implement({
    fields: (t) => ({
      run: t.field({ type: RunRef, resolve: (p) => p.run }),
      message: t.string({ resolve: (p) => p.start.message }),
      estimatedCost: t.float({ description: 'USD estimated and held at start.', resolve: (p) => p.run.estimatedCost }),
      details: t.field({
        type: 'JSON',
        nullable: true,
        description: "Tool-specific start fields of the REST response (e.g. search_translation).",
        resolve: (p) => p.start.extra ?? null,
      }),
    }),
  });

/**
 * Every tool of the registry becomes a mutation `start<Tool>(input: Start<Tool>Input!)`. Input
 * types are derived from the tool's zod schema; the service validates with that same schema.
 */
function defineToolMutation(tool: ToolDefinition) {
  const inputRef = inputTypeOf(tool.input, tool.graphql.inputType, { description: `Input of ${tool.title}.` });
  builder.mutationField(tool.graphql.mutation, (t) =>
    t.field({
      type: StartRunPayloadRef,
      description: `${tool.title}. ${tool.description} Price: ${tool.price.text}. REST: POST ${tool.rest.path}.`,
      args: {
        input: t.arg({ type: inputRef as never, required: true }),
        idempotencyKey: t.arg.string({ description: 'Replays the first response for 24 hours; the same key with another input is refused.' }),
        webhookUrl: t.arg.string({ description: "POSTed the run's end, signed with the `webhookSecret` returned in details (shown once)." }),
      },
      resolve: async (_, args, ctx) => {
        const input = { ...(withoutNulls(args.input) as object), ...(args.webhookUrl ? { webhookUrl: args.webhookUrl } : {}) };
        const result = await idempotent(ctx.core, ctx.principal, args.idempotencyKey, `graphql:${tool.graphql.mutation}`, input, () => prepareStart(ctx.core, ctx.principal, tool.name, input));
        return result.body as StartedRun;
      },
    }),
  );
}

for (const tool of TOOLS) if (!tool.linkedOnly) defineToolMutation(tool);
