import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import type { AllowanceKind } from '../db/tables/limits.ts';
import type { Account } from '../db/tables/accounts.ts';
import { TERMINAL_STATUSES } from '../db/tables/runs.ts';
import { allowancesToday, type AllowanceToday } from '../src/billing/allowances.ts';
import { planIncludes } from '../src/billing/plans.ts';
import { PURCHASE_RULES_TEXT, purchaseTerms, type PurchaseTerms } from '../src/billing/wallet.ts';
import { DOWNLOAD_LINK_SECS, signedDownloadPath } from '../src/runs/download-links.ts';
import { EXPORT_FORMATS, type ExportFormat } from '../src/runs/exports.ts';
import { isTerminal } from '../src/runs/view.ts';
import { columnLabel } from '../src/tools/columns.ts';
import { TOOLS } from '../src/tools/index.ts';
import type { Column, ToolDefinition } from '../src/tools/types.ts';
import { AccountRef, PlanEnum } from './account.ts';
import { builder } from './builder.ts';
import { resultTypeName } from './results.ts';
import { RunRef, ToolEnum } from './run.ts';
import { camel, jsonSchemaOf, unwrapNull, type JsonSchema } from './zod-input.ts';

/**
 * What a frontend needs to draw the tools without knowing them: each tool of the registry with its
 * price, plan gate, start mutation and the fields of its input type (read from the built schema, so a
 * form follows the same declaration REST, GraphQL and MCP validate with), and its result columns.
 * Also today’s use of the daily allowances on Account, signed download links on Run, and a credit purchase's quote.
 */

const INPUT_KINDS = [
  'TEXT',
  'TEXT_LIST',
  'INT',
  'FLOAT',
  'BOOLEAN',
  'ENUM',
  'ENUM_LIST',
  'OBJECT',
  'OBJECT_LIST',
] as const;
type InputKind = (typeof INPUT_KINDS)[number];

const InputKindEnum = builder.enumType('ToolInputKind', {
  description: 'How a form edits an input field: the shape of its GraphQL type.',
  values: {
    TEXT: { description: 'A string.' },
    TEXT_LIST: { description: 'A list of strings.' },
    INT: { description: 'A whole number.' },
    FLOAT: { description: 'A number.' },
    BOOLEAN: { description: 'True or false.' },
    ENUM: { description: 'One of `options`.' },
    ENUM_LIST: { description: 'Several of `options`.' },
    OBJECT: { description: 'An input object (see `type`), edited field by field (its `fields`).' },
    OBJECT_LIST: { description: 'A list of input objects (see `type`), each edited field by field (its `fields`).' },
  },
});

interface InputFieldView {
  name: string;
  label: string;
  description: string | null;
  example: string | null;
  fields: InputFieldView[];
  type: string;
  kind: InputKind;
  required: boolean;
  options: string[];
}

function kindOf(type: GraphQLInputType): { kind: InputKind; options: string[] } {
  const bare = getNullableType(type);
  const list = isListType(bare);
  const named = getNamedType(type);
  if (isEnumType(named)) return { kind: list ? 'ENUM_LIST' : 'ENUM', options: named.getValues().map((v) => v.name) };
  if (isInputObjectType(named)) return { kind: list ? 'OBJECT_LIST' : 'OBJECT', options: [] };
  if (list) return { kind: 'TEXT_LIST', options: [] };
  const scalar: Record<string, InputKind> = { Int: 'INT', Float: 'FLOAT', Boolean: 'BOOLEAN' };
  return { kind: scalar[named.name] ?? 'TEXT', options: [] };
}

/** The declared JSON schema of an object field (or of a list's items): where its sub-fields' labels are. */
const objectSchemaOf = (prop: JsonSchema | undefined): JsonSchema | undefined => {
  const inner = prop && unwrapNull(prop).schema;
  return inner?.type === 'array' ? inner.items : inner;
};

/**
 * The fields of the input type `typeName` as a form shows them: the GraphQL type's shape, and the
 * label, help and example declared on the zod schema (`json`, its input JSON schema).
 */
function inputFieldsOf(schema: GraphQLSchema, typeName: string, json: JsonSchema | undefined): InputFieldView[] {
  const type = schema.getType(typeName);
  if (!isInputObjectType(type)) return [];
  const props = Object.fromEntries(Object.entries(json?.properties ?? {}).map(([key, prop]) => [camel(key), prop]));
  return Object.values(type.getFields()).map((field) => {
    const prop = props[field.name];
    const example = prop?.examples?.[0];
    const named = getNamedType(field.type);
    return {
      name: field.name,
      label: prop?.title ?? field.name,
      description: prop?.description ?? field.description ?? null,
      example: example === undefined ? null : typeof example === 'string' ? example : JSON.stringify(example),
      type: String(field.type),
      required: isNonNullType(field.type),
      fields: isInputObjectType(named) ? inputFieldsOf(schema, named.name, objectSchemaOf(prop)) : [],
      ...kindOf(field.type),
    };
  });
}

const ToolInputFieldRef = builder.objectRef<InputFieldView>('ToolInputField');
ToolInputFieldRef.implement({
  description: 'A field of a tool’s start input type.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The field’s name in the input type (and the REST start body).' }),
    label: t.exposeString('label', {
      description:
        'Its name for people, as declared with the tool (OpenAPI’s `title`); the name when none is declared.',
    }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'What the field means, its default and limits.',
    }),
    example: t.exposeString('example', {
      nullable: true,
      description: 'A value that works, as declared with the tool: text as it is, other values as JSON.',
    }),
    fields: t.field({
      type: [ToolInputFieldRef],
      description: 'The fields of an OBJECT or OBJECT_LIST field’s input type; empty otherwise.',
      resolve: (f) => f.fields,
    }),
    type: t.exposeString('type', { description: 'Its GraphQL type, e.g. `[String!]` or `Int`.' }),
    kind: t.field({ type: InputKindEnum, description: 'How a form edits it.', resolve: (f) => f.kind }),
    required: t.exposeBoolean('required', { description: 'The start is refused without it.' }),
    options: t.exposeStringList('options', { description: 'The values of an enum field; empty otherwise.' }),
  }),
});

interface ColumnView {
  column: Column;
  field: string;
  leaf: boolean;
}

const ColumnValueRef = builder.objectRef<[string, string]>('ToolColumnValue').implement({
  description: 'A code a result column holds, and its words for people.',
  fields: (t) => ({
    value: t.string({ description: 'The code as the rows hold it (`c_suite`).', resolve: ([value]) => value }),
    label: t.string({ description: 'Its words (“C-suite”).', resolve: ([, label]) => label }),
  }),
});

const ToolColumnRef = builder.objectRef<ColumnView>('ToolColumn').implement({
  description: 'A result column of a tool: a field of its row type, a column of its CSV download.',
  fields: (t) => ({
    key: t.string({ description: 'The key in JSON downloads.', resolve: (c) => c.column.key }),
    field: t.exposeString('field', { description: 'The field of the tool’s row type in `RunResult`.' }),
    header: t.string({ description: 'The header in CSV downloads.', resolve: (c) => c.column.header }),
    label: t.string({
      description: 'Its name for people (a table’s header), e.g. “Company LinkedIn URL”.',
      resolve: (c) => columnLabel(c.column),
    }),
    values: t.field({
      type: [ColumnValueRef],
      description: 'Words for the codes it holds, where the tool declares them (seniorities); empty otherwise.',
      resolve: (c) => Object.entries(c.column.values ?? {}),
    }),
    description: t.string({ description: 'What the column holds.', resolve: (c) => c.column.description }),
    leaf: t.exposeBoolean('leaf', {
      description: 'The field is a scalar or a list of scalars (selected without sub-fields).',
    }),
  }),
});

function columnsOf(schema: GraphQLSchema, tool: ToolDefinition): ColumnView[] {
  const type = schema.getType(resultTypeName(tool));
  const fields = isObjectType(type) ? type.getFields() : {};
  return tool.columns.map((column) => {
    const field = camel(column.key);
    const graphqlField = fields[field];
    return { column, field, leaf: graphqlField !== undefined && isLeafType(getNamedType(graphqlField.type)) };
  });
}

export const ToolInfoRef = builder.objectRef<ToolDefinition>('ToolInfo').implement({
  description: 'A tool of the registry, as a frontend shows and starts it.',
  fields: (t) => ({
    name: t.field({ type: ToolEnum, description: 'The tool (a run’s `tool`).', resolve: (tool) => tool.name }),
    title: t.exposeString('title', { description: 'Its name for people.' }),
    description: t.exposeString('description', { description: 'What it finds.' }),
    priceText: t.string({
      description: 'What it costs, as docs/tools.md writes it.',
      resolve: (tool) => tool.price.text,
    }),
    priceUnit: t.string({
      description: 'What one billable unit is, e.g. `lead` (what `coveredUnits` of a start counts).',
      resolve: (tool) => tool.price.unit,
    }),
    plan: t.field({
      type: PlanEnum,
      nullable: true,
      description: 'The lowest plan that may use it; null for every plan.',
      resolve: (tool) => tool.plan ?? null,
    }),
    permissibleUse: t.boolean({
      description:
        'About individuals: not for regulated purposes; its starts are refused until the account acknowledges it ' +
        '(`permissibleUse`, `acknowledgePermissibleUse`).',
      resolve: (tool) => tool.permissibleUse === true,
    }),
    available: t.boolean({
      description: 'The caller’s plan may start it.',
      resolve: (tool, _, ctx) => planIncludes(ctx.principal.plan, tool.plan),
    }),
    cancellable: t.exposeBoolean('cancellable', { description: 'A run of it can be cancelled.' }),
    mutation: t.string({
      description: 'The mutation that starts it (it takes `input`, `dryRun`, `idempotencyKey`, `webhookUrl`).',
      resolve: (tool) => tool.graphql.mutation,
    }),
    inputType: t.string({ description: 'The name of its input type.', resolve: (tool) => tool.graphql.inputType }),
    inputFields: t.field({
      type: [ToolInputFieldRef],
      description: 'The fields of its input type, in order.',
      resolve: (tool, _, __, info) =>
        inputFieldsOf(info.schema, tool.graphql.inputType, jsonSchemaOf(tool.input, 'input')),
    }),
    columns: t.field({
      type: [ToolColumnRef],
      description: 'Its result columns, in CSV order.',
      resolve: (tool, _, __, info) => columnsOf(info.schema, tool),
    }),
  }),
});

builder.queryField('tools', (t) =>
  t.field({
    type: [ToolInfoRef],
    description: 'Every tool that can be started, in the registry’s order.',
    resolve: () => TOOLS.filter((tool) => !tool.linkedOnly),
  }),
);

builder.queryField('tool', (t) =>
  t.field({
    type: ToolInfoRef,
    nullable: true,
    description: 'One tool; null when it cannot be started on its own.',
    args: { name: t.arg({ type: ToolEnum, required: true, description: 'The tool.' }) },
    resolve: (_, { name }) => TOOLS.find((tool) => tool.name === name && !tool.linkedOnly) ?? null,
  }),
);

const AllowanceKindEnum = builder.enumType('AllowanceKind', {
  description: 'A daily allowance of an account.',
  values: {
    DATABASE: { value: 'database', description: 'Records read from the lead and local-business databases.' },
    ENRICHMENT: { value: 'enrichment', description: 'Rows matched by enrichment.' },
  } as Record<string, { value: AllowanceKind; description: string }>,
});

const DailyAllowanceRef = builder.objectRef<AllowanceToday>('DailyAllowance').implement({
  description: 'Today’s use of one daily allowance (UTC day).',
  fields: (t) => ({
    kind: t.field({ type: AllowanceKindEnum, description: 'Which allowance.', resolve: (a) => a.kind }),
    limit: t.exposeInt('limit', { description: 'How much a day holds.' }),
    used: t.int({ description: 'Used today.', resolve: (a) => a.limit - a.remaining }),
    remaining: t.exposeInt('remaining', { description: 'Left today.' }),
    resetsAt: t.field({
      type: 'DateTime',
      description: 'Midnight UTC, when it starts again.',
      resolve: (a) => a.resetsAt,
    }),
  }),
});

builder.objectField(AccountRef, 'allowancesToday', (t) =>
  t.field({
    type: [DailyAllowanceRef],
    description: 'Today’s use of the daily allowances (database records, enrichment matches).',
    resolve: (account: Account, _, ctx) => allowancesToday(ctx.core, account.id),
  }),
);

builder.objectField(RunRef, 'ended', (t) =>
  t.boolean({
    description:
      `The run has ended (${TERMINAL_STATUSES.map((s) => s.replace('-', '_')).join(', ')}): ` +
      'its status and rows change no more. A frontend reads this instead of keeping its own list of final statuses.',
    resolve: (run) => isTerminal(run.status),
  }),
);

const FORMAT_TEXT: Record<ExportFormat, string> = {
  csv: 'Comma-separated, a header line first; cells a spreadsheet would run as formulas are escaped.',
  json: 'One JSON array of row objects.',
  ndjson: 'One JSON object a line.',
  xlsx: 'An Excel workbook: one sheet, the CSV’s header row and cells, numbers as numbers.',
};

export const DownloadFormatEnum = builder.enumType('DownloadFormat', {
  description: 'A file format of a run’s rows.',
  values: Object.fromEntries(
    EXPORT_FORMATS.map((format) => [format.toUpperCase(), { value: format, description: FORMAT_TEXT[format] }]),
  ) as Record<Uppercase<ExportFormat>, { value: ExportFormat; description: string }>,
});

const SIGNED_LINK =
  `Works without a key for ${DOWNLOAD_LINK_SECS / 60} minutes (signed); ` +
  'null before the run ends, error RESULTS_EXPIRED after its rows are deleted.';

builder.objectField(RunRef, 'downloadPath', (t) =>
  t.string({
    nullable: true,
    description:
      `A link to the run’s rows in \`format\` as a path on this server (\`/api/downloads/…?…\`, ` +
      'no scheme or host), for pages the gateway serves, such as the console: ' +
      `resolved against the page’s own address, it downloads from wherever the page was opened. ${SIGNED_LINK}`,
    args: { format: t.arg({ type: DownloadFormatEnum, required: true, description: 'The file format.' }) },
    resolve: (run, { format }, ctx) => signedDownloadPath(ctx.core, ctx.principal, run, format),
  }),
);

builder.objectField(RunRef, 'downloadUrl', (t) =>
  t.string({
    nullable: true,
    description:
      `The link of \`downloadPath\` made absolute with this server’s public address (PUBLIC_URL), ` +
      `for programs and anything else that needs a whole URL. ${SIGNED_LINK}`,
    args: { format: t.arg({ type: DownloadFormatEnum, required: true, description: 'The file format.' }) },
    resolve: async (run, { format }, ctx) => {
      const path = await signedDownloadPath(ctx.core, ctx.principal, run, format);
      return path && `${ctx.core.config.publicUrl}${path}`;
    },
  }),
);

interface QuoteView {
  terms: PurchaseTerms;
}

const CreditQuoteRef = builder.objectRef<QuoteView>('CreditQuote').implement({
  description: 'What a purchase of credits would charge and add, before paying (the rules of `buyCredits`).',
  fields: (t) => ({
    originalAmount: t.field({
      type: 'Money',
      description: 'The amount asked for.',
      resolve: (q) => q.terms.originalUsd,
    }),
    amount: t.field({
      type: 'Money',
      description: 'What would be charged, after any adjustment.',
      resolve: (q) => q.terms.paidMicros,
    }),
    wasAdjusted: t.boolean({
      description: 'The amount asked for would be adjusted down (49, 50, 149 and 649 become 48, 48, 148 and 648).',
      resolve: (q) => q.terms.amountUsd !== q.terms.originalUsd,
    }),
    bonusPercent: t.int({
      description: 'The plan’s bonus, in percent of the amount charged.',
      resolve: (q) => q.terms.bonusPercent,
    }),
    bonus: t.field({
      type: 'Money',
      description: 'The bonus credits the plan adds.',
      resolve: (q) => q.terms.bonusMicros,
    }),
    credited: t.field({
      type: 'Money',
      description: 'Purchased credits added: the amount charged and the bonus.',
      resolve: (q) => q.terms.paidMicros + q.terms.bonusMicros,
    }),
  }),
});

builder.queryField('creditQuote', (t) =>
  t.field({
    type: CreditQuoteRef,
    description:
      `What \`buyCredits\` with \`amount\` would charge and credit, nothing bought: ` +
      `${PURCHASE_RULES_TEXT} Errors VALIDATION_FAILED (the amount) and SUBSCRIPTION_INACTIVE.`,
    args: { amount: t.arg({ type: 'Money', required: true, description: 'US dollars to buy, e.g. "100".' }) },
    resolve: (_, { amount }, ctx) => ({ terms: purchaseTerms(ctx.principal, Number(amount)) }),
  }),
);
