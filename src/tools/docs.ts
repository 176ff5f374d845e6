import { z } from 'zod';
import { EXPORT_FORMATS } from '../runs/exports.ts';
import { examplesOverride } from '../shared/field-meta.ts';
import { TOOLS } from './index.ts';
import { STEP_LINKS } from './steps.ts';
import type { ToolDefinition } from './types.ts';
import { upstreamDeclaration } from './upstream/index.ts';

/** What a tool's live source (its upstream declaration, docs/upstream.md) does not fill or cannot take. */
function liveDataSection(tool: ToolDefinition): string[] {
  const upstream = upstreamDeclaration(tool.name);
  if (!upstream) return [];
  const empty = Object.entries(upstream.unavailableColumns ?? {});
  return [
    '### On live data',
    '',
    `An operator may run this tool on the Apify actor [${upstream.defaultActor}](${upstream.actorUrl}) ` +
      '(`TOOL_SOURCES`, docs/upstream.md).' +
      (upstream.minimumChargeUsd
        ? ` The actor charges at least ${upstream.minimumChargeUsd.toFixed(2)} USD a run.`
        : '') +
      (empty.length ? ' Columns its items do not fill:' : ''),
    '',
    ...empty.map(([column, why]) => `- \`${column}\`: ${why}`),
    ...(empty.length ? [''] : []),
  ];
}

interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  examples?: unknown[];
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  maxLength?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

/** Enum values the parameter table lists; a longer list is counted. */
const MAX_ENUM_LISTED = 20;

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function typeName(schema: JsonSchema): string {
  if (schema.anyOf) return schema.anyOf.map(typeName).join(' or ');
  // A long vocabulary (the 167 home-service slugs) is listed in the tool's notes, not in the table.
  if (schema.enum && schema.enum.length > MAX_ENUM_LISTED)
    return `${schema.type ?? 'string'}, one of ${schema.enum.length}`;
  if (schema.enum) return schema.enum.map((v) => `\`${String(v)}\``).join(', ');
  const type = Array.isArray(schema.type)
    ? schema.type.filter((t) => t !== 'null').join(' or ')
    : (schema.type ?? 'any');
  if (type === 'array' && schema.items) return `${typeName(schema.items)}[]`;
  return type;
}

function bounds(schema: JsonSchema): string {
  const parts: string[] = [];
  if (schema.minimum !== undefined && schema.maximum !== undefined) parts.push(`${schema.minimum}–${schema.maximum}`);
  else if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
  else if (schema.maximum !== undefined) parts.push(`≤ ${schema.maximum}`);
  if (schema.maxItems !== undefined) parts.push(`at most ${schema.maxItems} items`);
  if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  return parts.join('; ');
}

function parameterRows(schema: JsonSchema, prefix = ''): string[] {
  const required = new Set(schema.required ?? []);
  const rows: string[] = [];
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    const dflt = prop.default === undefined ? '' : `\`${JSON.stringify(prop.default)}\``;
    const limits = bounds(prop);
    const notes = `${prop.description ?? ''}${limits ? ` (${limits})` : ''}`.trim();
    const example = prop.examples?.length ? `\`${JSON.stringify(prop.examples[0])}\`` : '';
    rows.push(
      `| \`${path}\` | ${cell(prop.title ?? '')} | ${cell(typeName(prop))} | ${cell(example)} | ` +
        `${required.has(name) && prop.default === undefined ? 'yes' : ''} | ${cell(dflt)} | ${cell(notes)} |`,
    );
    if (prop.type === 'object' && prop.properties) rows.push(...parameterRows(prop, `${path}.`));
    if (prop.type === 'array' && prop.items?.type === 'object') rows.push(...parameterRows(prop.items, `${path}[].`));
  }
  return rows;
}

function renderTool(tool: ToolDefinition): string {
  const schema = z.toJSONSchema(tool.input, {
    io: 'input',
    unrepresentable: 'any',
    override: examplesOverride,
  }) as JsonSchema;
  const alias = (a: NonNullable<ToolDefinition['rest']['aliases']>[number]) =>
    `\`POST ${a.path}\`${a.deprecated ? `, deprecated, sunset ${a.deprecated.sunset}` : ''}`;
  const aliases = tool.rest.aliases?.length ? ` (also ${tool.rest.aliases.map(alias).join(', ')})` : '';
  const routes = tool.linkedOnly
    ? '- Started only as a linked run of another tool (see its `linkedRuns`); no route of its own.'
    : [
        `- REST: \`POST ${tool.rest.path}\`${aliases}`,
        `- GraphQL: \`${tool.graphql.mutation}(input: ${tool.graphql.inputType}!)\``,
        `- MCP: \`${tool.mcp.name}\``,
      ].join('\n');
  return [
    `## ${tool.title}`,
    '',
    tool.description,
    '',
    routes,
    `- Price: ${tool.price.text}${tool.plan ? `; needs the ${tool.plan} plan or higher` : ''}`,
    `- Cancellable: ${tool.cancellable ? 'yes; a cancelled run keeps, and bills, the rows delivered so far' : 'no'}`,
    '',
    ...(tool.notes?.length ? ['### Rules', '', ...tool.notes.map((n) => `- ${n}`), ''] : []),
    ...(tool.example ? ['### Example', '', '```json', JSON.stringify(tool.example), '```', ''] : []),
    '### Parameters',
    '',
    '| parameter | label | type | example | required | default | notes |',
    '|---|---|---|---|---|---|---|',
    ...parameterRows(schema),
    '',
    '### Result columns',
    '',
    '| column | description |',
    '|---|---|',
    ...tool.columns.map((c) => `| \`${c.header}\` | ${cell(c.description)} |`),
    '',
    `Row identity (what a dataset keeps one row of, and what \`onlyNew\` skips): ` +
      `${tool.identity.map((key) => `\`${key}\``).join(' + ')}.`,
    '',
    ...liveDataSection(tool),
  ].join('\n');
}

/** docs/tools.md: every tool of the registry with its routes, price, parameters and result columns. */
export function renderToolsDoc(): string {
  return [
    '# Tools',
    '',
    '<!-- Generated from the tool registry (src/tools) by `npm run docs:tools`; a test checks it is current. -->',
    '',
    'Every tool starts a run: `POST` its route (or call its GraphQL mutation or MCP tool), then poll',
    '`GET /api/v1/scrape/status/{runId}` (or subscribe to `runProgress`) and download the rows from',
    `\`GET /api/downloads/{runId}?format=${EXPORT_FORMATS.join('|')}\`. ` +
      'Parameters are checked at start; a bad one answers',
    "400 `validation_failed` naming the field. Each parameter's label and example are declared with it " +
      '(`.meta({ title, examples })` on its zod schema): OpenAPI shows them as `title` and `examples`, GraphQL ' +
      "opens its description with the label, and the console's forms use the label, the notes as help and the " +
      'example as placeholder.',
    '',
    '| tool | route | price | cancellable |',
    '|---|---|---|---|',
    ...TOOLS.filter((t) => !t.linkedOnly).map(
      (t) =>
        `| [${t.title}](#${anchor(t.title)}) | \`${t.rest.path}\` ` +
        `| ${cell(t.price.text)} | ${t.cancellable ? 'yes' : 'no'} |`,
    ),
    '',
    ...stepLinksSection(),
    ...TOOLS.map(renderTool),
  ].join('\n');
}

/**
 * The step links (src/tools/steps.ts): which tool's rows feed which, the pipelines' steps and a finished
 * run's next steps.
 */
function stepLinksSection(): string[] {
  const title = (name: string) => TOOLS.find((t) => t.name === name)?.title ?? name;
  return [
    '## Step links',
    '',
    'A pipeline’s step after the first is fed by the rows of the step before through one of these links, and a',
    'finished run offers them as its next steps: the column read from each row (a list column gives its first',
    '`per row` values), the input field filled with the distinct values in row order, and the column of the fed',
    'tool’s rows that gives each value back (how the pipeline’s table joins a row with what the next step found).',
    '',
    '| from | column | to | field | per row | joined on | what |',
    '|---|---|---|---|---|---|---|',
    ...STEP_LINKS.map(
      (l) =>
        `| ${title(l.from)} | \`${l.column}\` | ${title(l.to)} | \`${l.field}\` | ${l.perRow} | ` +
        `\`${l.echo}\` | ${cell(l.description)} |`,
    ),
    '',
  ];
}

const anchor = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');
