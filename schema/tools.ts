import { z } from 'zod';
import { withIdempotency } from '../src/services/idempotency.ts';
import { startRun, type StartedRun } from '../src/services/runs.ts';
import { TOOLS } from '../src/tools/index.ts';
import type { ToolDefinition } from '../src/tools/types.ts';
import { builder } from './builder.ts';
import { RunRef } from './run.ts';

/**
 * Every tool of the registry becomes a mutation `start<Tool>(input: Start<Tool>Input!)`. Input
 * types are derived from the tool's zod schema; the service validates with that same schema.
 */

interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

type InputFieldType = string | [string] | object | [object];

const pascal = (s: string) => s.replace(/(^|[_-])(\w)/g, (_, __, c: string) => c.toUpperCase());

function scalarFor(schema: JsonSchema): string {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return 'String';
    case 'integer':
      return 'Int';
    case 'number':
      return 'Float';
    case 'boolean':
      return 'Boolean';
    default:
      return 'JSON';
  }
}

function typeFor(schema: JsonSchema, name: string): InputFieldType {
  if (schema.type === 'object' && schema.properties) return inputObject(schema, name);
  if (schema.type === 'array' && schema.items) {
    const inner = typeFor(schema.items, name);
    return Array.isArray(inner) ? 'JSON' : [inner as string];
  }
  return scalarFor(schema);
}

function inputObject(schema: JsonSchema, name: string) {
  const required = new Set(schema.required ?? []);
  return builder.inputType(name, {
    description: schema.description,
    fields: (t) =>
      Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([field, prop]) => [
          field,
          t.field({
            type: typeFor(prop, `${name.replace(/Input$/, '')}${pascal(field)}Input`) as never,
            required: required.has(field),
            description: prop.description,
          }),
        ]),
      ),
  });
}

/** GraphQL sends explicit nulls for "not given"; the tools' schemas read absent fields. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, withoutNulls(v)]),
    );
  }
  return value;
}

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

function defineToolMutation(tool: ToolDefinition) {
  const schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const inputRef = inputObject({ ...schema, description: `Input of ${tool.title}.` }, tool.graphql.inputType);
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
        const result = await withIdempotency(ctx.core.accountWrites, ctx.principal.accountId, args.idempotencyKey, `graphql:${tool.graphql.mutation}`, input, async (tx) => ({
          status: 200,
          body: await startRun(ctx.core, ctx.principal, tool.name, input, { tx }),
        }));
        return result.body as StartedRun;
      },
    }),
  );
}

for (const tool of TOOLS) if (!tool.linkedOnly) defineToolMutation(tool);
