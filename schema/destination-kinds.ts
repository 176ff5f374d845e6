import { effectiveMapping, KINDS, type DeliverableKind, destinationInput } from '../src/destinations/destinations.ts';
import { KIND_FIELDS } from '../src/destinations/fields.ts';
import { settingsOf as kindSettings } from '../src/destinations/targets.ts';
import { getTool } from '../src/tools/index.ts';
import { builder } from './builder.ts';
import { enumName, inGraphQLWords, ProviderEnum } from './connected-providers.ts';
import { ToolEnum } from './run.ts';
import { jsonSchemaOf, scalarOf } from './zod-input.ts';

/**
 * What a destination can be: its kinds (each with the provider it needs, the settings it takes and the
 * fields its mapping may name), derived from the declarations of src/destinations, and the field
 * mappings of a destination and of a kind's defaults.
 */

const KIND_NAMES = Object.keys(KINDS) as DeliverableKind[];

export const DestinationKindEnum = builder.enumType('DestinationKind', {
  description: 'What a destination does with rows.',
  values: Object.fromEntries(
    KIND_NAMES.map((kind) => [enumName(kind), { value: kind, description: KINDS[kind].title }]),
  ) as Record<string, { value: DeliverableKind; description: string }>,
});

/** The fields of a destination's input that are neither its identity nor its mapping: its settings. */
const NOT_SETTINGS = new Set(['name', 'kind', 'connection', 'mapping']);
const inputSchema = jsonSchemaOf(destinationInput, 'input');

export interface Setting {
  name: string;
  /** In GraphQL's words (`GOOGLE_SHEET: …`). */
  description: string;
  scalar: ReturnType<typeof scalarOf>;
}

/** Every setting a destination may carry, as its input declares it. */
export const SETTINGS: Setting[] = Object.entries(inputSchema.properties ?? {})
  .filter(([name]) => !NOT_SETTINGS.has(name))
  .map(([name, prop]) => ({
    name,
    description: inGraphQLWords(prop.description ?? `The destination’s ${name}.`, KIND_NAMES),
    scalar: scalarOf(prop, `CreateDestinationInput.${name}`),
  }));

/** The settings a kind requires, then those it may take, as its declaration says. */
function settingsOf(kind: DeliverableKind): { setting: Setting; required: boolean }[] {
  const { required, optional } = kindSettings(kind);
  return SETTINGS.flatMap((setting): { setting: Setting; required: boolean }[] => {
    if ((required as readonly string[]).includes(setting.name)) return [{ setting, required: true }];
    return (optional as readonly string[]).includes(setting.name) ? [{ setting, required: false }] : [];
  });
}

const DestinationSettingRef = builder
  .objectRef<{ setting: Setting; required: boolean }>('DestinationSetting')
  .implement({
    description: 'A setting a kind of destination takes: a field of `CreateDestinationInput` and of `Destination`.',
    fields: (t) => ({
      name: t.string({ description: 'The field’s name.', resolve: (s) => s.setting.name }),
      description: t.string({ description: 'What it is.', resolve: (s) => s.setting.description }),
      required: t.exposeBoolean('required', { description: 'The kind refuses a destination without it.' }),
    }),
  });

const MappingFieldsEnum = builder.enumType('MappingFields', {
  description: 'What a kind of destination takes as the field of a column.',
  values: {
    LIST: { value: 'list', description: 'One of `DestinationKindInfo.fields`.' },
    API_NAME: { value: 'apiName', description: 'Any field of the provider’s object, by its API name.' },
    HEADER: { value: 'header', description: 'Any column header of the sheet.' },
    NONE: { value: 'none', description: 'None: the kind sends no fields (a summary).' },
  },
});

export interface FieldMapping {
  tool: string;
  column: string;
  field: string | null;
}

export const FieldMappingRef = builder.objectRef<FieldMapping>('FieldMapping').implement({
  description: 'Where a tool’s result column goes at a destination.',
  fields: (t) => ({
    tool: t.field({ type: ToolEnum, description: 'The tool.', resolve: (m) => m.tool }),
    column: t.exposeString('column', { description: 'The column’s key (`ToolColumn.key`).' }),
    field: t.exposeString('field', { nullable: true, description: 'The provider’s field; null: not sent.' }),
  }),
});

export const FieldMappingInputRef = builder.inputType('FieldMappingInput', {
  description: 'Where a tool’s result column goes, in place of its default.',
  fields: (t) => ({
    tool: t.field({ type: ToolEnum, required: true, description: 'The tool.' }),
    column: t.string({ required: true, description: 'The column’s key (`ToolColumn.key`).' }),
    field: t.string({ description: 'The provider’s field; null: the column is not sent.' }),
  }),
});

/** Every column of `tool` with the field a destination of `kind` with `mapping` sends it to (null: not sent). */
export function mappingOf(
  kind: string,
  mapping: Record<string, Record<string, string | null>>,
  toolName: string,
): FieldMapping[] {
  const tool = getTool(toolName);
  const mapped = effectiveMapping(
    { kind: kind as DeliverableKind, mapping },
    tool.columns.map((column) => ({ column, tool: tool.name, key: column.key })),
  );
  return tool.columns.map((c) => ({
    tool: tool.name,
    column: c.key,
    field: mapped.find((m) => m.key === c.key)?.field ?? null,
  }));
}

const fieldsOf = (kind: DeliverableKind) => KIND_FIELDS[kind] ?? null;

const DestinationKindInfoRef = builder.objectRef<DeliverableKind>('DestinationKindInfo').implement({
  description: 'A kind of destination, as a form makes one.',
  fields: (t) => ({
    kind: t.field({ type: DestinationKindEnum, description: 'The kind.', resolve: (k) => k }),
    title: t.string({ description: 'What it does, in words.', resolve: (k) => KINDS[k].title }),
    provider: t.field({
      type: ProviderEnum,
      description: 'The provider whose connection it needs.',
      resolve: (k) => KINDS[k].provider,
    }),
    settings: t.field({ type: [DestinationSettingRef], description: 'Its settings.', resolve: settingsOf }),
    mappingFields: t.field({
      type: MappingFieldsEnum,
      description: 'What its mapping takes as a column’s field.',
      resolve: (k) => {
        const fields = fieldsOf(k);
        return fields === null ? 'none' : Array.isArray(fields) ? 'list' : (fields as 'apiName' | 'header');
      },
    }),
    fields: t.stringList({
      nullable: true,
      description: 'The fields its mapping may name, when they are a fixed list (`mappingFields` LIST).',
      resolve: (k) => {
        const fields = fieldsOf(k);
        return Array.isArray(fields) ? [...fields] : null;
      },
    }),
    defaultMapping: t.field({
      type: [FieldMappingRef],
      description: 'Each result column of `tool` with the field it goes to by default (null: not sent).',
      args: { tool: t.arg({ type: ToolEnum, required: true, description: 'The tool.' }) },
      resolve: (k, args) => mappingOf(k, {}, args.tool),
    }),
  }),
});

builder.queryField('destinationKinds', (t) =>
  t.field({
    type: [DestinationKindInfoRef],
    description: 'The kinds of destination this server delivers to.',
    resolve: () => KIND_NAMES,
  }),
);

/** A mapping given as a list (GraphQL) as the service takes it: per tool, column → field. */
export function mappingRecord(list: readonly { tool: string; column: string; field?: string | null }[]) {
  const record: Record<string, Record<string, string | null>> = {};
  for (const m of list) record[m.tool] = { ...record[m.tool], [m.column]: m.field ?? null };
  return record;
}

/** A record mapping (a destination's) as a list. */
export const mappingList = (record: Record<string, Record<string, string | null>>): FieldMapping[] =>
  Object.entries(record).flatMap(([tool, columns]) =>
    Object.entries(columns).map(([column, field]) => ({ tool, column, field })),
  );
