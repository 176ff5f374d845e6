import { TOOLS } from '../src/tools/index.ts';
import { DEFAULT_COLUMN_TYPE, type Row, type ToolDefinition } from '../src/tools/types.ts';
import { builder } from './builder.ts';
import { pascal } from './zod-input.ts';
import { outputTypeOfFields } from './zod-output.ts';

/**
 * A run's result rows as GraphQL types: one object type per tool, generated from the tool's column
 * declaration (`columns`: key, description, type), and the `RunResult` union of them all.
 */

const TOOL = Symbol('tool');

/** A row tagged with the tool that made it, so the union knows its type. */
export type ResultRow = Row & { [TOOL]: string };

export const resultTypeName = (tool: Pick<ToolDefinition, 'name'>) => `${pascal(tool.name)}Result`;

const resultTypes = TOOLS.map((tool) => {
  const type = outputTypeOfFields(
    resultTypeName(tool),
    `A result row of ${tool.title} (tool ${tool.name}); the same columns as its CSV and JSON downloads.`,
    tool.columns.map((c) => ({ key: c.key, schema: c.type ?? DEFAULT_COLUMN_TYPE, description: c.description })),
  );
  return { tool: tool.name, type };
});

const typeOfTool = new Map(resultTypes.map((r) => [r.tool, resultTypeName({ name: r.tool })]));

export const RunResultRef = builder.unionType('RunResult', {
  description: 'A result row of a run: the type of its tool (`... on MapsResult { name phone }`).',
  types: resultTypes.map((r) => r.type) as never,
  resolveType: (value: ResultRow) => typeOfTool.get(value[TOOL]),
});

export const DatasetRowRef = builder.unionType('DatasetRow', {
  description: 'A row of a dataset: the type of its tool (`... on MapsResult { name phone }`), as a run’s rows.',
  types: resultTypes.map((r) => r.type) as never,
  resolveType: (value: ResultRow) => typeOfTool.get(value[TOOL]),
});

/**
 * A run's rows as the union's values: each row tagged in place with its tool (a symbol, never
 * serialised), not copied: the rows are this operation's own, read for it.
 */
export function resultRows(tool: string, rows: readonly Row[]): ResultRow[] {
  for (const row of rows) (row as ResultRow)[TOOL] = tool;
  return rows as ResultRow[];
}
