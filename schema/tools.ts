import { datasetName, onlyNew } from '../src/datasets/index.ts';
import { destinationIds } from '../src/destinations/destinations.ts';
import { idempotentWrite } from '../src/accounts/idempotency.ts';
import { dryRunStart, prepareStart, type StartedRun } from '../src/runs/start.ts';
import { TOOLS } from '../src/tools/index.ts';
import { z } from 'zod';
import { COST_TEXTS, costLimit, MAX_COST_DESCRIPTION, maxCostUsdSchema } from '../src/runs/quote.ts';
import { parseParams } from '../src/shared/params.ts';
import type { ToolDefinition } from '../src/tools/types.ts';
import { coerceInputValue, isInputType, type GraphQLSchema } from 'graphql';
import { ValidationError } from '../src/shared/errors.ts';
import { builder } from './builder.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { RunRef } from './run.ts';
import { startDetailsFields } from './start-details.ts';
import { inputTypeOf, pascal } from './zod-input.ts';

type StartPayload = Partial<StartedRun> & { userErrors: UserError[]; dryRun?: boolean };

const costLimitArgs = z.object({ maxCostUsd: maxCostUsdSchema.optional() });

/** The `maxCostUsd` argument as the start's limits, refused (a user error at it) outside its bounds. */
const costLimitArg = (maxCostUsd: number | null | undefined) =>
  costLimit(parseParams(costLimitArgs, { maxCostUsd: maxCostUsd ?? undefined }).maxCostUsd);

const extraOf = (p: StartPayload) => (p.start?.extra ?? {}) as Record<string, unknown>;

/** What a start held, USD. */
const heldOf = (p: StartPayload) => (extraOf(p).estimatedCost as number | undefined) ?? p.run?.estimatedCost ?? 0;

/** Whole units of the tool's price that `usd` pays for. */
const unitsCovered = (tool: ToolDefinition, usd: number) =>
  tool.price.unitMicros > 0n ? Number(BigInt(Math.round(usd * 1_000_000)) / tool.price.unitMicros) : null;

/**
 * Every tool of the registry becomes a mutation `start<Tool>(input: Start<Tool>Input!)` answering
 * `Start<Tool>Payload`. Input types are derived from the tool's zod schema; the service validates
 * with that same schema, and its refusals become `userErrors` (paths under `input`).
 */
function defineToolMutation(tool: ToolDefinition) {
  const input = inputTypeOf(tool.input, tool.graphql.inputType, {
    description: `Input of ${tool.title}, as its REST start body (docs/tools.md).`,
  });
  decoders.set(tool.name, { inputType: tool.graphql.inputType, decode: input.decode });
  const payload = builder.objectRef<StartPayload>(`${pascal(tool.graphql.mutation)}Payload`).implement({
    description: `What \`${tool.graphql.mutation}\` answers: the run started, or \`userErrors\`.`,
    fields: (t) => ({
      run: t.field({
        type: RunRef,
        nullable: true,
        description:
          'The run started (RUNNING, or READY while the account has its maximum running); null for a dry run.',
        resolve: (p) => (p.dryRun ? null : (p.run ?? null)),
      }),
      message: t.string({
        nullable: true,
        description: 'What the run will do, for people.',
        resolve: (p) => p.start?.message ?? null,
      }),
      estimatedCost: t.field({
        type: 'Money',
        nullable: true,
        description: COST_TEXTS.estimatedCost,
        resolve: (p) => (p.run ? ((extraOf(p).estimatedCost as number | undefined) ?? p.run.estimatedCost) : null),
      }),
      uncappedCost: t.field({
        type: 'Money',
        nullable: true,
        description: `${COST_TEXTS.uncappedCost} Null when nothing caps the hold.`,
        resolve: (p) => (p.run ? ((extraOf(p).uncappedCost as number | undefined) ?? null) : null),
      }),
      walletCovers: t.boolean({
        nullable: true,
        description:
          'Whether the wallet holds everything asked (`uncappedCost` is null); when false the run stops once ' +
          '`estimatedCost` is spent, after `coveredUnits`. Null without a run or a dry run.',
        resolve: (p) => (p.run ? extraOf(p).uncappedCost === undefined : null),
      }),
      coveredUnits: t.int({
        nullable: true,
        description:
          `The ${tool.price.unit}s (the price's unit) that \`estimatedCost\` pays for at the list price: ` +
          'when the wallet caps the hold, the run stops after about this many. Null without a run or a dry run.',
        resolve: (p) => (p.run ? unitsCovered(tool, heldOf(p)) : null),
      }),
      webhookSecret: t.string({
        nullable: true,
        description:
          'The signing secret of the run’s `webhookUrl` (whsec_…), shown only in this answer; null without a ' +
          'webhookUrl.',
        resolve: (p) => (p.dryRun ? null : ((extraOf(p).webhookSecret as string | undefined) ?? null)),
      }),
      ...startDetailsFields(t, tool, extraOf),
      userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
    }),
  });
  builder.mutationField(tool.graphql.mutation, (t) =>
    t.field({
      type: payload,
      description: `${tool.title}. ${tool.description} Price: ${tool.price.text}.${
        tool.plan ? ` Needs the ${tool.plan} plan or higher (user error PLAN_REQUIRED).` : ''
      }`,
      args: {
        input: t.arg({ type: input.ref as never, required: true, description: 'What to run.' }),
        idempotencyKey: t.arg.string({
          description:
            'Replays the first answer for 24 hours; the same key with another input is refused ' +
            '(IDEMPOTENCY_KEY_REUSED).',
        }),
        webhookUrl: t.arg.string({
          description: "POSTed the run's end, signed with the `webhookSecret` of this answer (shown once).",
        }),
        datasetName: t.arg.string({ description: datasetName.description }),
        onlyNew: t.arg.boolean({ description: onlyNew.description }),
        destinations: t.arg.idList({ description: destinationIds.description }),
        maxCostUsd: t.arg.float({ description: MAX_COST_DESCRIPTION }),
        dryRun: t.arg.boolean({
          description:
            'Checks the start and answers its estimate and `userErrors` without starting anything (no run, no hold, ' +
            'no charge); default false.',
        }),
      },
      resolve: (_, args, ctx) =>
        mutationPayload(
          async () => {
            const body = {
              ...(input.decode(args.input) as object),
              ...(args.webhookUrl ? { webhookUrl: args.webhookUrl } : {}),
              ...(args.datasetName ? { datasetName: args.datasetName } : {}),
              ...(typeof args.onlyNew === 'boolean' ? { onlyNew: args.onlyNew } : {}),
              ...(args.destinations?.length ? { destinations: args.destinations.map(String) } : {}),
            };
            const limits = costLimitArg(args.maxCostUsd);
            if (args.dryRun)
              return {
                ...(await dryRunStart(ctx.core, ctx.principal, tool.name, body, limits)),
                dryRun: true,
              };
            const call = {
              principal: ctx.principal,
              key: args.idempotencyKey,
              scope: `graphql:${tool.graphql.mutation}`,
              request: body,
            };
            const result = await idempotentWrite(ctx.core, call, () =>
              prepareStart(ctx.core, ctx.principal, tool.name, body, limits),
            );
            return result.body as StartedRun;
          },
          (path) => (ARGUMENT_FIELDS.includes(String(path[0])) ? path : ['input', ...path]),
        ),
    }),
  );
}

const decoders = new Map<string, { inputType: string; decode: (value: unknown) => unknown }>();

/**
 * A tool's input given as JSON in the shape of its start mutation's `input` (enum names and all), as its
 * service takes it: coerced by the input type as a variable would be, then decoded. A value the type
 * refuses is a user error at `field`, in GraphQL's words.
 */
export function decodeToolInput(schema: GraphQLSchema, tool: string, value: unknown, field: string[]): unknown {
  const decoder = decoders.get(tool);
  // A tool started only with another (the owner contact of a property lookup) has no input of its own.
  if (!decoder)
    throw new ValidationError([
      {
        path: 'tool',
        message:
          `${TOOLS.find((t) => t.name === tool)?.title ?? tool} starts only with another tool's run: ` +
          'it cannot be saved as a task.',
      },
    ]);
  const type = schema.getType(decoder.inputType);
  if (!type || !isInputType(type)) throw new Error(`no start input type for ${tool}`);
  const problems: { path: string; message: string }[] = [];
  const coerced = coerceInputValue(value, type, (path, _invalid, error) =>
    problems.push({ path: [...field, ...path.map(String)].join('.'), message: error.message }),
  );
  if (problems.length > 0) throw new ValidationError(problems);
  return decoder.decode(coerced);
}

/** Start fields that are the mutation's own arguments, not fields of its `input`. */
const ARGUMENT_FIELDS = ['webhookUrl', 'maxCostUsd', 'datasetName', 'onlyNew', 'destinations'];

for (const tool of TOOLS) if (!tool.linkedOnly) defineToolMutation(tool);
