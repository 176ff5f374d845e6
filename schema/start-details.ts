import type { ToolDefinition } from '../src/tools/types.ts';
import { camel, pascal } from './zod-input.ts';
import { outputFieldOf } from './zod-output.ts';

/**
 * The tool-specific fields of a start's payload, typed from the tool's declaration (`startDetails`):
 * one field per detail, camelCase, null when the start was refused or the tool left it out.
 */
export function startDetailsFields<P>(
  t: unknown,
  tool: ToolDefinition,
  extraOf: (payload: P) => Record<string, unknown>,
): Record<string, unknown> {
  const shape = tool.startDetails?.shape ?? {};
  return Object.fromEntries(
    Object.entries(shape).map(([key, schema]) => {
      const { type, description } = outputFieldOf(schema as never, `${pascal(tool.name)}${pascal(key)}`);
      return [
        camel(key),
        (t as unknown as { field: (options: object) => unknown }).field({
          type,
          nullable: true,
          description: description ?? `The start’s ${key}.`,
          resolve: (p: P) => extraOf(p)[key] ?? null,
        }),
      ];
    }),
  );
}
