import type { Destination } from '../db/tables/destinations.ts';
import type { SavedTask } from '../db/tables/workflows.ts';
import { findConnection } from '../src/destinations/connections.ts';
import { findDestination, listDestinations } from '../src/destinations/destinations.ts';
import {
  createRowDestination,
  deleteRowDestination,
  getRowDestination,
  listRowDestinations,
  resumeRowDestination,
} from '../src/endpoints/api/destinations.ts';
import { graphqlFieldOf } from '../src/endpoints/define.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { builder } from './builder.ts';
import { AFTER_DESCRIPTION, connectionType, FIRST_DESCRIPTION } from './connection.ts';
import {
  DestinationKindEnum,
  FieldMappingInputRef,
  FieldMappingRef,
  mappingList,
  mappingOf,
  mappingRecord,
  SETTINGS,
} from './destination-kinds.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { pageComplexity, pageOf } from './identity/lists.ts';
import { NodeRef, registerNode } from './node.ts';
import { ConnectedProviderRef } from './connected-providers.ts';
import { ToolEnum } from './run.ts';
import { TaskRef } from './workflows.ts';

/**
 * Destinations (src/destinations/destinations.ts): a provider connection and what to do with rows,
 * named in `destinations` on a start, a pipeline or a saved task; the rows are delivered when it ends.
 * Anyone in the account makes and removes them, as on REST.
 */

type Mapping = Record<string, Record<string, string | null>>;
const mappingOfRow = (d: Destination) => d.mapping as Mapping;
const settingOf = (d: Destination, name: string) => (d.settings as Record<string, unknown>)[name] ?? null;

const SettingValueRef = builder.objectRef<{ name: string; value: string }>('DestinationSettingValue').implement({
  description: 'A setting a destination has, by name.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The setting’s name: a field of `Destination` and of its input.' }),
    value: t.exposeString('value', { description: 'Its value.' }),
  }),
});

export const DestinationRef = builder.objectRef<Destination>('Destination').implement({
  description:
    'A provider connection and what to do with rows (upsert HubSpot contacts, post a Slack summary…). Name it in ' +
    '`destinations` on a tool’s start, a pipeline or a saved task: the rows are delivered when it ends.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'dest_…: its global id.' }),
    name: t.exposeString('name', { description: 'Its name.' }),
    kind: t.field({
      type: DestinationKindEnum,
      description: 'What it does with rows.',
      resolve: (d) => d.kind as never,
    }),
    connection: t.field({
      type: ConnectedProviderRef,
      nullable: true,
      description: 'The connection it uses.',
      resolve: (d, _, ctx) => findConnection(ctx.core.db, ctx.principal.accountId, d.connectionId).catch(() => null),
    }),
    ...Object.fromEntries(
      SETTINGS.map((s) => [
        s.name,
        t.field({
          type: s.scalar as 'String',
          nullable: true,
          description: `${s.description} Null when it has none.`,
          resolve: (d) => settingOf(d, s.name) as never,
        }),
      ]),
    ),
    settings: t.field({
      type: [SettingValueRef],
      description: 'The settings it has, each by name: the fields above, for a client that lists them all.',
      resolve: (d) =>
        Object.entries(d.settings as Record<string, unknown>)
          .filter(([, value]) => value !== null && value !== undefined && value !== '')
          .map(([name, value]) => ({ name, value: String(value) })),
    }),
    mapping: t.field({
      type: [FieldMappingRef],
      description: 'The columns it sends elsewhere than by default, or not at all (`field` null).',
      resolve: (d) => mappingList(mappingOfRow(d)),
    }),
    effectiveMapping: t.field({
      type: [FieldMappingRef],
      description: 'Each result column of `tool` with the field it goes to here (null: not sent).',
      args: { tool: t.arg({ type: ToolEnum, required: true, description: 'The tool.' }) },
      resolve: (d, args) => mappingOf(d.kind, mappingOfRow(d), args.tool),
    }),
    paused: t.boolean({ description: 'Whether it takes no deliveries for now.', resolve: (d) => d.pausedAt !== null }),
    pausedReason: t.exposeString('pausedReason', {
      nullable: true,
      description: 'Why it is paused (its connection broke…); `resumeDestination` once that is settled.',
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was made.', resolve: (d) => d.createdAt }),
  }),
});

registerNode('dest', 'Destination', {
  keepsPrefix: true,
  localId: /^dest_[A-Za-z0-9]{1,64}$/,
  load: (ids, ctx) =>
    Promise.all(ids.map((id) => findDestination(ctx.core.db, ctx.principal.accountId, id).catch(() => null))),
});

const DestinationConnectionRef = connectionType<Destination>('Destination', DestinationRef, {
  description: 'A page of the account’s destinations, newest first.',
  totalCount: 'How many destinations the account has.',
});

builder.queryField(graphqlFieldOf(listRowDestinations), (t) =>
  t.field({
    type: DestinationConnectionRef,
    description: 'The account’s destinations, newest first; paused ones say why.',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(100, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) =>
      pageOf(
        (await callEndpoint(ctx.core, ctx.principal, listRowDestinations, undefined, { shape: (d) => d })).body,
        args,
      ),
  }),
);

builder.queryField(graphqlFieldOf(getRowDestination), (t) =>
  t.field({
    type: DestinationRef,
    nullable: true,
    description: 'A destination by id (dest_…); null when the account has none.',
    args: { id: t.arg.id({ required: true, description: 'Its id.' }) },
    resolve: (_, args, ctx) =>
      callEndpoint(ctx.core, ctx.principal, getRowDestination, String(args.id), { shape: (d) => d }).then(
        (called) => called.body,
        () => null,
      ),
  }),
);

builder.objectField(TaskRef, 'destinations', (t) =>
  t.field({
    type: [DestinationRef],
    description: 'The destinations each of its starts delivers its rows to (those the account still has).',
    resolve: async (task: SavedTask, _, ctx) => {
      const ids = task.destinationIds ?? [];
      if (ids.length === 0) return [];
      return (await listDestinations(ctx.core.db, ctx.principal.accountId)).filter((d) => ids.includes(d.id));
    },
  }),
);

const CreateDestinationInputRef = builder.inputType('CreateDestinationInput', {
  description: 'A destination to make: a connection, what to do with rows, its settings and its field mapping.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Its name.' }),
    kind: t.field({ type: DestinationKindEnum, required: true, description: 'What it does with rows.' }),
    connection: t.id({
      required: true,
      description: 'The connection it uses (con_…), to the provider the kind needs (`DestinationKindInfo.provider`).',
    }),
    ...Object.fromEntries(
      SETTINGS.map((s) => [s.name, t.field({ type: s.scalar as 'String', description: s.description })]),
    ),
    mapping: t.field({
      type: [FieldMappingInputRef],
      description:
        'Columns sent elsewhere than by default (`DestinationKindInfo.defaultMapping`), or not at all (`field` null).',
    }),
  }),
});

type MappingArg = { tool: string; column: string; field?: string | null };

/**
 * Where a refusal of the service's mapping (`mapping.<tool>.<column>`) sits in the GraphQL input: at the
 * entry of the list that gave it. Other paths sit under `input`.
 */
const placeIn =
  (list: readonly MappingArg[]) =>
  (path: string[]): string[] => {
    const [first, tool, column] = path;
    if (first !== 'mapping' || !tool || !column) return ['input', ...path];
    // The service's path was put in GraphQL's words: a column key's `_x` is `X` there.
    const at = list.findIndex(
      (m) => m.tool === tool && m.column.replace(/_([a-z])/g, (_, c) => c.toUpperCase()) === column,
    );
    return at < 0 ? ['input', 'mapping'] : ['input', 'mapping', String(at), 'field'];
  };

type DestinationPayload = { destination?: Destination; userErrors: UserError[] };
const destinationPayload = (name: string, what: string) =>
  builder.objectRef<DestinationPayload>(name).implement({
    description: `What \`${what}\` answers.`,
    fields: (t) => ({
      destination: t.field({
        type: DestinationRef,
        nullable: true,
        description: 'The destination; null when refused.',
        resolve: (p) => p.destination ?? null,
      }),
      userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
    }),
  });

builder.mutationField(graphqlFieldOf(createRowDestination), (t) =>
  t.field({
    type: destinationPayload('CreateDestinationPayload', 'createDestination'),
    description:
      'Makes a destination. Its connection must be the account’s, to the provider its kind needs, and its settings ' +
      'are checked at the provider: user errors VALIDATION_FAILED at the field at fault.',
    args: { input: t.arg({ type: CreateDestinationInputRef, required: true, description: 'The destination.' }) },
    resolve: (_, { input }, ctx) => {
      const { mapping, ...rest } = input as Record<string, unknown> & { mapping?: MappingArg[] | null };
      const body = {
        ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null && v !== undefined)),
        ...(mapping ? { mapping: mappingRecord(mapping) } : {}),
      };
      return mutationPayload(
        async () => {
          const called = await callEndpoint(ctx.core, ctx.principal, createRowDestination, body, { shape: (d) => d });
          return { destination: called.body };
        },
        placeIn(mapping ?? []),
      );
    },
  }),
);

builder.mutationField(graphqlFieldOf(resumeRowDestination), (t) =>
  t.field({
    type: destinationPayload('ResumeDestinationPayload', 'resumeDestination'),
    description:
      'Resumes a paused destination (connect its provider again first, if its connection broke): it takes ' +
      'deliveries again. User error DESTINATION_NOT_FOUND for no such destination in the account.',
    args: { id: t.arg.id({ required: true, description: 'Its id (dest_…).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const id = String(args.id);
        const called = await callEndpoint(ctx.core, ctx.principal, resumeRowDestination, id, { shape: (d) => d });
        return { destination: called.body };
      }, ['id']),
  }),
);

type DeletePayload = { deletedDestinationId?: string; userErrors: UserError[] };
builder.mutationField(graphqlFieldOf(deleteRowDestination), (t) =>
  t.field({
    type: builder.objectRef<DeletePayload>('DeleteDestinationPayload').implement({
      description: 'What `deleteDestination` answers.',
      fields: (f) => ({
        deletedDestinationId: f.id({
          nullable: true,
          description: 'The id of the destination deleted, with its deliveries; null when refused.',
          resolve: (p) => p.deletedDestinationId ?? null,
        }),
        userErrors: f.field({
          type: [UserErrorRef],
          description: USER_ERRORS_DESCRIPTION,
          resolve: (p) => p.userErrors,
        }),
      }),
    }),
    description:
      'Deletes a destination with its deliveries; starts naming it deliver nothing to it. User error ' +
      'DESTINATION_NOT_FOUND for no such destination in the account.',
    args: { id: t.arg.id({ required: true, description: 'Its id (dest_…).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        await callEndpoint(ctx.core, ctx.principal, deleteRowDestination, String(args.id), { shape: () => undefined });
        return { deletedDestinationId: String(args.id) };
      }, ['id']),
  }),
);
