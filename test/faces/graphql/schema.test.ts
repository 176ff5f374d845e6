import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLUnionType,
} from 'graphql';
import { CriticalityLevel, diff } from '@graphql-inspector/core';
import { schema } from '../../../schema/index.ts';
import { TOOLS } from '../../../src/tools/index.ts';

/**
 * The v2 conventions of the schema as built (docs/graphql.md, "Conventions"), checked on every type:
 * descriptions everywhere, names, scalars, one connection shape, global identification, typed rows;
 * and the breaking changes against v1 (schema/v1.graphql) all listed in docs/graphql-changelog.md.
 */

const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');
const BUILT_IN = new Set(['String', 'Int', 'Float', 'Boolean', 'ID']);
const types = Object.values(schema.getTypeMap()).filter((t) => !t.name.startsWith('__') && !BUILT_IN.has(t.name));
const objects = types.filter((t): t is GraphQLObjectType => isObjectType(t));

/** Every field of every object and interface type, with its owner. */
const fields = types.flatMap((type) =>
  isObjectType(type) || isInterfaceType(type)
    ? Object.values(type.getFields()).map((field) => ({ type, field: field as GraphQLField<unknown, unknown> }))
    : [],
);
const inputFields = types.flatMap((type) =>
  isInputObjectType(type) ? Object.values(type.getFields()).map((field) => ({ type, field })) : [],
);

describe('descriptions', () => {
  it('every type, field, argument, input field and enum value has one', () => {
    const missing: string[] = [];
    for (const type of types) if (!type.description?.trim()) missing.push(type.name);
    for (const { type, field } of fields) {
      if (!field.description?.trim()) missing.push(`${type.name}.${field.name}`);
      for (const arg of field.args)
        if (!arg.description?.trim()) missing.push(`${type.name}.${field.name}(${arg.name})`);
    }
    for (const { type, field } of inputFields)
      if (!field.description?.trim()) missing.push(`${type.name}.${field.name}`);
    for (const type of types)
      if (isEnumType(type))
        for (const value of type.getValues())
          if (!value.description?.trim()) missing.push(`${type.name}.${value.name}`);
    expect(missing).toEqual([]);
  });
});

describe('names and scalars', () => {
  it('every field, argument and input field is camelCase; every enum value SCREAMING_SNAKE_CASE', () => {
    const camel = /^[a-z][a-zA-Z0-9]*$/;
    const bad: string[] = [];
    for (const { type, field } of fields) {
      if (!camel.test(field.name)) bad.push(`${type.name}.${field.name}`);
      for (const arg of field.args) if (!camel.test(arg.name)) bad.push(`${type.name}.${field.name}(${arg.name})`);
    }
    for (const { type, field } of inputFields) if (!camel.test(field.name)) bad.push(`${type.name}.${field.name}`);
    for (const type of types)
      if (isEnumType(type))
        for (const value of type.getValues())
          if (!/^[A-Z][A-Z0-9_]*$/.test(value.name)) bad.push(`${type.name}.${value.name}`);
    expect(bad).toEqual([]);
  });

  it('JSON is used by the inputs of runs and saved tasks alone (each a tool’s input, typed by its start mutation)', () => {
    const json = [
      ...fields
        .filter(({ field }) => getNamedType(field.type).name === 'JSON')
        .map(({ type, field }) => `${type.name}.${field.name}`),
      ...fields.flatMap(({ type, field }) =>
        field.args
          .filter((a) => getNamedType(a.type).name === 'JSON')
          .map((a) => `${type.name}.${field.name}(${a.name})`),
      ),
      ...inputFields
        .filter(({ field }) => getNamedType(field.type).name === 'JSON')
        .map(({ type, field }) => `${type.name}.${field.name}`),
    ];
    expect(json.sort()).toEqual([
      'CreateTaskInput.input',
      'Mutation.startNextStep(input)',
      'Mutation.startTask(input)',
      'PipelineStep.input',
      'PipelineStepInput.input',
      'Run.input',
      'Task.input',
    ]);
  });

  it('no Float is money: amounts of US dollars are Money (inputs included), other currencies Decimal', () => {
    const money = /USD|dollar|price|cost|revenue|sales|amount|balance|credits|ebitda|cash ?flow/i;
    const floats = [
      ...fields
        .filter(({ field }) => getNamedType(field.type).name === 'Float')
        .map(({ type, field }) => ({ name: `${type.name}.${field.name}`, text: `${field.name} ${field.description}` })),
      ...inputFields
        .filter(({ field }) => getNamedType(field.type).name === 'Float')
        .map(({ type, field }) => ({ name: `${type.name}.${field.name}`, text: `${field.name} ${field.description}` })),
    ];
    // Percentages, ratings, coordinates and durations stay Float.
    const notMoney = /percent|rating|latitude|longitude|lat\d|lng\d|secs/i;
    expect(floats.filter((f) => money.test(f.text) && !notMoney.test(f.name)).map((f) => f.name)).toEqual([]);
    const of = (type: string, field: string) =>
      getNamedType((schema.getType(type) as GraphQLObjectType).getFields()[field]!.type).name;
    expect([
      of('Run', 'cost'),
      of('Run', 'estimatedCost'),
      of('Wallet', 'totalBalance'),
      of('LedgerEntry', 'amount'),
      of('CreditPurchase', 'amount'),
    ]).toEqual(['Money', 'Money', 'Money', 'Money', 'Money']);
    expect(
      getNamedType(
        schema
          .getMutationType()!
          .getFields()
          .buyCredits!.args.find((a) => a.name === 'amount')!.type,
      ).name,
    ).toBe('Money');
    expect((schema.getType('Money') as { specifiedByURL?: string }).specifiedByURL).toBeTruthy();
    expect((schema.getType('DateTime') as { specifiedByURL?: string }).specifiedByURL).toBeTruthy();
    expect(isScalarType(schema.getType('Decimal'))).toBe(true);
  });

  it('Run.tool is the Tool enum of the registry', () => {
    const tool = getNamedType((schema.getType('Run') as GraphQLObjectType).getFields().tool!.type);
    expect(isEnumType(tool)).toBe(true);
    expect(isEnumType(tool) && tool.getValues().map((v) => v.value)).toEqual(TOOLS.map((t) => t.name));
  });
});

describe('connections', () => {
  const connections = objects.filter((t) => t.name.endsWith('Connection'));

  it('every connection is `XConnection { edges { cursor node } nodes pageInfo totalCount }` with the one PageInfo', () => {
    expect(connections.map((c) => c.name).sort()).toEqual(
      [
        'LeadConnection',
        'LeadPreviewConnection',
        'SavedSearchConnection',
        'LedgerEntryConnection',
        'StatementLineConnection',
        'LocalBusinessConnection',
        'RunConnection',
        'RunResultConnection',
        'StoreConnection',
        'WebhookConnection',
        'WebhookDeliveryConnection',
        ...['ApiKeyConnection', 'ConsoleSessionConnection', 'InvitationConnection', 'MembershipConnection'],
        'ConnectedAppConnection',
        'DatasetConnection',
        'DatasetRowConnection',
        'TaskConnection',
        'ScheduleConnection',
        'ScheduleFireConnection',
        'PipelineConnection',
        'ConnectedProviderConnection',
        'DestinationConnection',
        'DeliveryConnection',
        'DoNotContactEntryConnection',
        'AuditEventConnection',
        'EnrichmentJobConnection',
      ].sort(),
    );
    for (const connection of connections) {
      const f = connection.getFields();
      const name = connection.name.replace(/Connection$/, '');
      expect(String(f.edges!.type), connection.name).toBe(`[${name}Edge!]!`);
      expect(String(f.nodes!.type), connection.name).toBe(`[${name}!]!`);
      expect(String(f.pageInfo!.type), connection.name).toBe('PageInfo!');
      expect(String(f.totalCount!.type), connection.name).toBe('Int!');
      const edge = (schema.getType(`${name}Edge`) as GraphQLObjectType).getFields();
      expect(Object.keys(edge)).toEqual(['cursor', 'node']);
      expect(String(edge.node!.type)).toBe(`${name}!`);
    }
    expect(Object.keys((schema.getType('PageInfo') as GraphQLObjectType).getFields())).toEqual([
      'hasNextPage',
      'hasPreviousPage',
      'startCursor',
      'endCursor',
    ]);
    expect(types.filter((t) => /PageInfo$/.test(t.name)).map((t) => t.name)).toEqual(['PageInfo']);
  });

  it('every list of objects is a connection taking `first` and `after` only, and no field takes `last` or `before`', () => {
    const offenders: string[] = [];
    for (const { type, field } of fields) {
      const args = field.args.map((a) => a.name);
      if (args.includes('last') || args.includes('before')) offenders.push(`${type.name}.${field.name}: last/before`);
      if (getNamedType(field.type).name.endsWith('Connection') && !type.name.endsWith('Connection')) {
        for (const wanted of ['first', 'after'])
          if (!args.includes(wanted)) offenders.push(`${type.name}.${field.name}: no ${wanted}`);
      }
    }
    // Lists that are not connections: a connection's own edges and nodes, small fixed lists, lists inside a row or answer.
    const lists = fields.filter(({ type, field }) => {
      const inner = isNonNullType(field.type) ? field.type.ofType : field.type;
      return (
        isListType(inner) &&
        !isScalarType(getNamedType(field.type)) &&
        !isEnumType(getNamedType(field.type)) &&
        !type.name.endsWith('Connection')
      );
    });
    const pageable = lists.filter(
      ({ type }) => type === schema.getQueryType() || ['Account', 'Run', 'Webhook'].includes(type.name),
    );
    // Query.tools (the registry, about twenty), Account.allowancesToday (one per allowance kind),
    // Run.nextSteps (the step links out of one tool, a handful), Run.log (five entries at most), Query.providers and
    // Query.destinationKinds and Query.auditActions (declared lists, a few dozen at most) and Query.plans (three)
    // are fixed lists.
    expect(pageable.map(({ type, field }) => `${type.name}.${field.name}`)).toEqual([
      'Account.allowancesToday',
      'Run.log',
      'Run.nextSteps',
      'Query.nodes',
      'Query.plans',
      'Query.tools',
      'Query.providers',
      'Query.destinationKinds',
      'Query.auditActions',
    ]);
    expect(offenders).toEqual([]);
  });
});

describe('global object identification', () => {
  it('Node { id: ID! }, node(id:) and nodes(ids:), implemented by every object with an identity', () => {
    const node = schema.getType('Node');
    expect(isInterfaceType(node) && Object.keys(node.getFields())).toEqual(['id']);
    const query = schema.getQueryType()!.getFields();
    expect(String(query.node!.type)).toBe('Node');
    expect(String(query.node!.args[0]!.type)).toBe('ID!');
    expect(String(query.nodes!.type)).toBe('[Node]!');
    expect(String(query.nodes!.args[0]!.type)).toBe('[ID!]!');
    const implementers = schema
      .getPossibleTypes(node as never)
      .map((t) => t.name)
      .sort();
    expect(implementers).toEqual([
      'Account',
      'ApiKey',
      'AuditEvent',
      'Company',
      'ConnectedApp',
      'ConnectedProvider',
      'ConsoleSession',
      'Dataset',
      'Delivery',
      'Destination',
      'DoNotContactEntry',
      'EnrichmentJob',
      'Invitation',
      'Lead',
      'LedgerEntry',
      'Membership',
      'Pipeline',
      'Run',
      'SavedSearch',
      'Schedule',
      'Task',
      'User',
      'Webhook',
      'WebhookDelivery',
    ]);
    // Every other object with an `id: ID!` is a catalog record with a unique id that is deliberately not refetchable
    // (docs/graphql.md); a LeadPreview's id is its Lead's, which node(id:) finds once the account has the lead.
    const withId = objects.filter((t) => String(t.getFields().id?.type) === 'ID!').map((t) => t.name);
    expect(withId.filter((name) => !implementers.includes(name)).sort()).toEqual([
      'LeadPreview',
      'LocalBusiness',
      'Store',
    ]);
  });
});

describe('typed rows', () => {
  it('each tool has a result type generated from its columns, and RunResult is their union', () => {
    const union = schema.getType('RunResult') as GraphQLUnionType;
    expect(isUnionType(union)).toBe(true);
    const members = union.getTypes().map((t) => t.name);
    expect(members).toHaveLength(TOOLS.length);
    for (const tool of TOOLS) {
      const typeName = `${tool.name.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase())}Result`;
      expect(members).toContain(typeName);
      const type = schema.getType(typeName) as GraphQLObjectType;
      const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
      expect(Object.keys(type.getFields())).toEqual(tool.columns.map((c) => camel(c.key)));
      for (const column of tool.columns)
        expect(type.getFields()[camel(column.key)]!.description).toBe(column.description);
    }
    const results = (schema.getType('Run') as GraphQLObjectType).getFields().results!;
    expect(String(results.type)).toBe('RunResultConnection');
    const batch = (schema.getType('RunItemsBatch') as GraphQLObjectType).getFields().results!;
    expect(String(batch.type)).toBe('[RunResult!]!');
  });
});

describe('mutations', () => {
  it('every mutation answers a payload ending in `userErrors: [UserError!]!`', () => {
    for (const field of Object.values(schema.getMutationType()!.getFields())) {
      const payload = getNamedType(field.type) as GraphQLNamedType;
      expect(payload.name, field.name).toMatch(/Payload$/);
      expect(String((payload as GraphQLObjectType).getFields().userErrors!.type), field.name).toBe('[UserError!]!');
    }
    const userError = (schema.getType('UserError') as GraphQLObjectType).getFields();
    expect(Object.fromEntries(Object.entries(userError).map(([k, v]) => [k, String(v.type)]))).toEqual({
      code: 'ErrorCode!',
      field: '[String!]',
      message: 'String!',
    });
  });
});

describe('against v1', () => {
  it('every breaking change from schema/v1.graphql is listed in docs/graphql-changelog.md', async () => {
    const v1 = buildSchema(read('schema/v1.graphql'));
    const changes = await diff(v1, schema);
    const breaking = changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking);
    expect(breaking.length).toBeGreaterThan(0);
    const changelog = read('docs/graphql-changelog.md');
    const v2 = changelog.slice(changelog.indexOf('## v2'));
    const unlisted = breaking.filter((c) => !v2.includes(`\`${c.path}\``)).map((c) => `${c.path}: ${c.message}`);
    expect(unlisted).toEqual([]);
  });
});
