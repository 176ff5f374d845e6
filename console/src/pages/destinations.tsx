import { useEffect, useState, type FormEvent } from 'react';
import { Alert, Button, Card, Group, NativeSelect, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { Link, useNavigate } from 'react-router';
import { useClient, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type {
  ConsoleDestinationsQuery,
  CreateDestinationInput,
  DestinationKind,
  FieldMappingInput,
  Tool,
} from '../gql/graphql.ts';
import { Ago, Loading, QueryError, TableScroll } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';

const DestinationsQuery = graphql(`
  query ConsoleDestinations {
    destinationKinds {
      kind
      title
      provider
      mappingFields
      fields
      settings {
        name
        description
        required
      }
    }
    providers {
      provider
      name
    }
    connectedProviders(first: 100) {
      nodes {
        id
        name
        provider
        status
      }
    }
    destinations(first: 100) {
      nodes {
        id
        name
        kind
        paused
        pausedReason
        createdAt
        connection {
          id
          name
        }
      }
    }
    tools {
      name
      title
      columns {
        key
        header
      }
    }
  }
`);

const DefaultMapping = graphql(`
  query ConsoleDefaultMapping($tool: Tool!) {
    destinationKinds {
      kind
      defaultMapping(tool: $tool) {
        column
        field
      }
    }
  }
`);

const CreateDestination = graphql(`
  mutation ConsoleCreateDestination($input: CreateDestinationInput!) {
    createDestination(input: $input) {
      destination {
        id
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

type Data = ConsoleDestinationsQuery;
type Kind = Data['destinationKinds'][number];
/** Per tool, per column: the field chosen in the form (null: not sent), where it differs from the default. */
type Edits = Record<string, Record<string, string | null>>;
/** Per kind, per tool: the default field of each column (null: not sent). */
type Defaults = Record<string, Record<string, Record<string, string | null>>>;

interface Problems {
  fields: Record<string, string>;
  /** At a row of the mapping: `tool.column`. */
  mapping: Record<string, string>;
  other: string[];
}
const noProblems = (): Problems => ({ fields: {}, mapping: {}, other: [] });

/** The value a select shows for “not sent” (a field is never empty). */
const NOT_SENT = '';

/** The mapping as the API takes it: only the columns sent elsewhere than by default, or not at all. */
function mappingInput(edits: Edits, defaults: Defaults[string] | undefined): FieldMappingInput[] {
  return Object.entries(edits).flatMap(([tool, columns]) =>
    Object.entries(columns)
      .filter(([column, field]) => (defaults?.[tool]?.[column] ?? null) !== field)
      .map(([column, field]) => ({ tool: tool as Tool, column, field })),
  );
}

/** The refusals of a create, at the field, setting or mapping row they name. */
function placeProblems(
  errors: readonly { field?: readonly string[] | null; message: string }[],
  sent: readonly FieldMappingInput[],
): Problems {
  const problems = noProblems();
  for (const e of errors) {
    const [root, first, index] = e.field ?? [];
    const entry = first === 'mapping' && index !== undefined ? sent[Number(index)] : undefined;
    if (root !== 'input' || !first) problems.other.push(e.message);
    else if (entry) problems.mapping[`${entry.tool}.${entry.column}`] = e.message;
    else problems.fields[first] = problems.fields[first] ? `${problems.fields[first]} ${e.message}` : e.message;
  }
  return problems;
}

/** Where each column of a tool goes: its default, or the field chosen here. */
function MappingTable({
  kind,
  tool,
  defaults,
  edits,
  problems,
  onChange,
}: {
  kind: Kind;
  tool: Data['tools'][number];
  defaults: Record<string, string | null> | undefined;
  edits: Record<string, string | null>;
  problems: Record<string, string>;
  onChange(column: string, field: string | null): void;
}) {
  if (!defaults) return <Loading />;
  return (
    <div className="scroll-x">
      <Table aria-label={`Where the columns of ${tool.title} go`} striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Column</Table.Th>
            <Table.Th>Field</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {tool.columns.map((column) => {
            const value = column.key in edits ? edits[column.key] : (defaults[column.key] ?? null);
            const label = `Field for ${column.header}`;
            const error = problems[`${tool.name}.${column.key}`];
            const change = (field: string) => onChange(column.key, field === NOT_SENT ? null : field);
            return (
              <Table.Tr key={column.key}>
                <Table.Td>{column.header}</Table.Td>
                <Table.Td>
                  {kind.mappingFields === 'LIST' ? (
                    <NativeSelect
                      aria-label={label}
                      value={value ?? NOT_SENT}
                      error={error}
                      onChange={(e) => change(e.currentTarget.value)}
                      data={[
                        { value: NOT_SENT, label: 'Not sent' },
                        ...(kind.fields ?? []).map((f) => ({ value: f, label: f })),
                      ]}
                    />
                  ) : (
                    <TextInput
                      aria-label={label}
                      placeholder="Not sent"
                      value={value ?? ''}
                      error={error}
                      onChange={(e) => change(e.currentTarget.value.trim())}
                    />
                  )}
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </div>
  );
}

function NewDestination({ data, first }: { data: Data; first: Kind }) {
  const client = useClient();
  const navigate = useNavigate();
  const kinds = data.destinationKinds;
  const [kindName, setKindName] = useState<DestinationKind>(first.kind);
  const kind = kinds.find((k) => k.kind === kindName) ?? first;
  const usable = data.connectedProviders.nodes.filter((c) => c.provider === kind.provider);
  const [name, setName] = useState('');
  const [connection, setConnection] = useState('');
  const [settings, setSettings] = useState<Record<string, string>>({});
  const [tool, setTool] = useState('');
  const [edits, setEdits] = useState<Edits>({});
  const [defaults, setDefaults] = useState<Defaults>({});
  const [problems, setProblems] = useState<Problems>(noProblems());
  const [busy, setBusy] = useState(false);
  const providerName = data.providers.find((p) => p.provider === kind.provider)?.name ?? kind.provider;
  const chosenConnection = usable.some((c) => c.id === connection) ? connection : (usable[0]?.id ?? '');
  const shownTool = data.tools.find((t) => t.name === tool);

  // A tool's default mapping, for every kind at once, the first time the tool is chosen.
  useEffect(() => {
    if (!tool || Object.values(defaults).some((d) => d[tool])) return;
    void client
      .query(DefaultMapping, { tool: tool as Tool })
      .toPromise()
      .then((result) =>
        setDefaults((all) => {
          const next = { ...all };
          for (const k of result.data?.destinationKinds ?? [])
            next[k.kind] = {
              ...next[k.kind],
              [tool]: Object.fromEntries(k.defaultMapping.map((m) => [m.column, m.field ?? null])),
            };
          return next;
        }),
      );
  }, [tool, defaults, client]);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    const mapping = mappingInput(edits, defaults[kind.kind]);
    const given = Object.fromEntries(
      kind.settings.map((s) => [s.name, settings[s.name]?.trim()]).filter(([, v]) => v),
    ) as Partial<CreateDestinationInput>;
    const input: CreateDestinationInput = {
      name,
      kind: kind.kind,
      connection: chosenConnection,
      ...given,
      ...(mapping.length > 0 ? { mapping } : {}),
    };
    setBusy(true);
    try {
      const result = await client.mutation(CreateDestination, { input }, { requestPolicy: 'network-only' }).toPromise();
      if (result.error)
        return setProblems({
          ...noProblems(),
          other: [result.error.graphQLErrors[0]?.message ?? result.error.message],
        });
      const answer = result.data?.createDestination;
      if (answer?.destination) return navigate(`/destinations/${answer.destination.id}`);
      if (answer) setProblems(placeProblems(answer.userErrors, mapping));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={create} noValidate aria-label="New destination">
      <Card withBorder>
        <Stack maw={720}>
          <Title order={3} size="h4">
            New destination
          </Title>
          <TextInput
            label="Name"
            required
            value={name}
            error={problems.fields.name}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <NativeSelect
            label="What to do with rows"
            value={kind.kind}
            error={problems.fields.kind}
            onChange={(e) => {
              setKindName(e.currentTarget.value as DestinationKind);
              setEdits({});
              setProblems(noProblems());
            }}
            data={kinds.map((k) => ({ value: k.kind, label: k.title }))}
          />
          {usable.length > 0 ? (
            <NativeSelect
              label={`${providerName} connection`}
              value={chosenConnection}
              error={problems.fields.connection}
              onChange={(e) => setConnection(e.currentTarget.value)}
              data={usable.map((c) => ({
                value: c.id,
                label: c.status === 'ACTIVE' ? c.name : `${c.name} (broken: connect again)`,
              }))}
            />
          ) : (
            <Alert color="yellow" title={`No ${providerName} connection yet`}>
              This kind of destination needs one: <Link to="/connections">connect {providerName}</Link> first.
            </Alert>
          )}
          {kind.settings.map((s) => (
            <TextInput
              key={s.name}
              label={s.name}
              description={s.description}
              required={s.required}
              value={settings[s.name] ?? ''}
              error={problems.fields[s.name]}
              onChange={(e) => {
                const value = e.currentTarget.value;
                setSettings((all) => ({ ...all, [s.name]: value }));
              }}
            />
          ))}
          {kind.mappingFields !== 'NONE' && (
            <Stack gap="xs">
              <NativeSelect
                label="Where a tool’s columns go"
                description="Each column goes to a field by default; change it, or send it nowhere."
                value={tool}
                error={problems.fields.mapping}
                onChange={(e) => setTool(e.currentTarget.value)}
                data={[
                  { value: '', label: 'Choose a tool' },
                  ...data.tools.map((t) => ({ value: t.name, label: t.title })),
                ]}
              />
              {shownTool && (
                <MappingTable
                  kind={kind}
                  tool={shownTool}
                  defaults={defaults[kind.kind]?.[shownTool.name]}
                  edits={edits[shownTool.name] ?? {}}
                  problems={problems.mapping}
                  onChange={(column, field) =>
                    setEdits((all) => ({ ...all, [shownTool.name]: { ...all[shownTool.name], [column]: field } }))
                  }
                />
              )}
            </Stack>
          )}
          {problems.other.length > 0 && (
            <Alert color="red" role="alert" title="Not made">
              {problems.other.map((m) => (
                <div key={m}>{m}</div>
              ))}
            </Alert>
          )}
          <Group>
            <Button type="submit" loading={busy} disabled={!chosenConnection}>
              Make destination
            </Button>
          </Group>
        </Stack>
      </Card>
    </form>
  );
}

export default function Destinations() {
  const [{ data, error }] = useQuery({ query: DestinationsQuery, requestPolicy: 'cache-and-network' });
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const titleOf = new Map(data.destinationKinds.map((k) => [k.kind, k.title]));
  const destinations = data.destinations.nodes;
  return (
    <Stack>
      <PageTitle title="Destinations">
        A destination is a connection and what to do with rows: upsert them as CRM records, append them to a sheet, post
        a summary to a channel. Pick destinations when you start a tool, a pipeline or a saved task; the rows are
        delivered when it ends.
      </PageTitle>
      {destinations.length === 0 ? (
        <Text c="dimmed">No destinations yet.</Text>
      ) : (
        <TableScroll label="Destinations" minWidth={720}>
          <Table aria-label="Destinations" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>What it does</Table.Th>
                <Table.Th>Connection</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Made</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {destinations.map((d) => (
                <Table.Tr key={d.id}>
                  <Table.Td>
                    <Link to={`/destinations/${d.id}`}>{d.name}</Link>
                  </Table.Td>
                  <Table.Td>{titleOf.get(d.kind) ?? d.kind}</Table.Td>
                  <Table.Td>{d.connection?.name ?? '—'}</Table.Td>
                  <Table.Td>{d.paused ? `Paused: ${d.pausedReason ?? 'by hand'}` : 'Takes deliveries'}</Table.Td>
                  <Table.Td>
                    <Ago iso={d.createdAt} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableScroll>
      )}
      {data.destinationKinds[0] && <NewDestination data={data} first={data.destinationKinds[0]} />}
    </Stack>
  );
}
