import { useState, type FormEvent } from 'react';
import {
  Alert,
  Button,
  Card,
  Group,
  NativeSelect,
  PasswordInput,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useSearchParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ConsoleProviderConnectionsQuery, Provider } from '../gql/graphql.ts';
import { Loading, QueryError, TableScroll, useConfirm, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { when } from '../lib/format.ts';
import { useSession } from '../lib/session-context.tsx';
import { byField } from '../tool-input.tsx';

const ConnectionsQuery = graphql(`
  query ConsoleProviderConnections {
    providers {
      provider
      name
      signIn
      token
    }
    connectedProviders(first: 100) {
      nodes {
        id
        provider
        method
        name
        externalName
        status
        brokenReason
        createdAt
      }
    }
  }
`);

const BeginConnect = graphql(`
  mutation ConsoleBeginConnect($input: BeginProviderConnectInput!) {
    beginProviderConnect(input: $input) {
      authorizeUrl
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const ConnectWithToken = graphql(`
  mutation ConsoleConnectWithToken($input: ConnectProviderWithTokenInput!) {
    connectProviderWithToken(input: $input) {
      connection {
        id
        name
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const Disconnect = graphql(`
  mutation ConsoleDisconnect($id: ID!) {
    disconnectProvider(id: $id) {
      disconnectedConnectionId
      userErrors {
        code
        field
        message
      }
    }
  }
`);

type ProviderInfo = ConsoleProviderConnectionsQuery['providers'][number];
type Problems = { fields: Record<string, string>; other: string[] };

/**
 * Connecting a provider: by signing in there (the browser goes to the provider's consent page and comes
 * back to this page), or with a token the provider issued.
 */
function Connect({ providers, onConnected }: { providers: readonly ProviderInfo[]; onConnected(): void }) {
  const usable = providers.filter((p) => p.signIn || p.token);
  const [provider, setProvider] = useState<Provider | ''>(usable[0]?.provider ?? '');
  const [name, setName] = useState('');
  const [token, setToken] = useState('');
  const [problems, setProblems] = useState<Problems>({ fields: {}, other: [] });
  const [begun, begin] = useMutation(BeginConnect);
  const [connected, connect] = useMutation(ConnectWithToken);
  const chosen = usable.find((p) => p.provider === provider);
  if (usable.length === 0)
    return <Text c="dimmed">This server connects to no provider yet: its operator has not set any up.</Text>;
  const failed = (message: string) => setProblems({ fields: {}, other: [message] });

  const signIn = async () => {
    if (!chosen) return;
    const result = await begin({ input: { provider: chosen.provider, name: name.trim() || chosen.name } });
    if (result.error) return failed(result.error.graphQLErrors[0]?.message ?? result.error.message);
    const answer = result.data?.beginProviderConnect;
    if (answer?.authorizeUrl) return window.location.assign(answer.authorizeUrl);
    if (answer) setProblems(byField(answer.userErrors));
  };

  const withToken = async (event: FormEvent) => {
    event.preventDefault();
    if (!chosen) return;
    const result = await connect({ input: { provider: chosen.provider, name: name.trim() || chosen.name, token } });
    if (result.error) return failed(result.error.graphQLErrors[0]?.message ?? result.error.message);
    const answer = result.data?.connectProviderWithToken;
    if (answer?.connection) {
      setToken('');
      setName('');
      setProblems({ fields: {}, other: [] });
      return onConnected();
    }
    if (answer) setProblems(byField(answer.userErrors));
  };

  return (
    <Card withBorder component="section" aria-label="Connect a provider">
      <Stack maw={560}>
        <Title order={3} size="h4">
          Connect a provider
        </Title>
        <NativeSelect
          label="Provider"
          value={provider}
          error={problems.fields.provider}
          onChange={(e) => setProvider(e.currentTarget.value as Provider)}
          data={usable.map((p) => ({ value: p.provider, label: p.name }))}
        />
        <TextInput
          label="Name"
          description="What you call this connection, e.g. the portal or workspace it reaches."
          placeholder={chosen?.name}
          value={name}
          error={problems.fields.name}
          onChange={(e) => setName(e.currentTarget.value)}
        />
        {chosen?.signIn && (
          <Group>
            <Button loading={begun.fetching} onClick={() => void signIn()}>
              Sign in with {chosen.name}
            </Button>
            <Text size="sm" c="dimmed">
              You give your consent at {chosen.name}, then come back here.
            </Text>
          </Group>
        )}
        {chosen?.token && (
          <form onSubmit={withToken} aria-label={`Connect ${chosen.name} with a token`}>
            <Stack gap="xs">
              {chosen.signIn && <Text size="sm">Or paste a token {chosen.name} issued:</Text>}
              <PasswordInput
                label="Token"
                description="Checked at the provider, then kept sealed; it is never shown again."
                value={token}
                error={problems.fields.token}
                onChange={(e) => setToken(e.currentTarget.value)}
              />
              <Group>
                <Button type="submit" variant="light" loading={connected.fetching} disabled={!token.trim()}>
                  Connect with the token
                </Button>
              </Group>
            </Stack>
          </form>
        )}
        {problems.other.length > 0 && (
          <Alert color="red" role="alert" title="Not connected">
            {problems.other.map((m) => (
              <div key={m}>{m}</div>
            ))}
          </Alert>
        )}
      </Stack>
    </Card>
  );
}

/** What the provider's sign-in came back with (`?connected=<id>` or `?refused=<why>`), in words. */
function SignInOutcome({
  connections,
}: {
  connections: ConsoleProviderConnectionsQuery['connectedProviders']['nodes'];
}) {
  const [params] = useSearchParams();
  const connected = params.get('connected');
  const refused = params.get('refused');
  if (refused)
    return (
      <Alert color="red" role="alert" title="Not connected">
        {refused}
      </Alert>
    );
  if (!connected) return null;
  const made = connections.find((c) => c.id === connected);
  return (
    <Alert color="green" role="status" title="Connected">
      {made ? `${made.name} is connected.` : 'The connection was made.'}
    </Alert>
  );
}

export default function Connections() {
  const [confirmation, ask] = useConfirm();
  const { session } = useSession();
  const mayConnect = session.permissions.includes('connections');
  const [{ data, error }, refetch] = useQuery({ query: ConnectionsQuery, requestPolicy: 'cache-and-network' });
  const [disconnected, disconnect] = useMutation(Disconnect);
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const nameOf = new Map(data.providers.map((p) => [p.provider, p.name]));
  const connections = data.connectedProviders.nodes;
  return (
    <Stack>
      {confirmation}
      <PageTitle title="Connections">
        A connection is the account’s access to a CRM, a spreadsheet or a chat, made by signing in there or with a token
        it issued. Destinations use connections to deliver the rows of runs.
      </PageTitle>
      <SignInOutcome connections={connections} />
      {mayConnect ? (
        <Connect providers={data.providers} onConnected={reload} />
      ) : (
        <Text c="dimmed">Owners and admins connect providers; you can use these connections in destinations.</Text>
      )}
      <UserErrors errors={disconnected.data?.disconnectProvider.userErrors ?? []} />
      {connections.length === 0 ? (
        <Text c="dimmed">No connections yet.</Text>
      ) : (
        <TableScroll label="Connections" minWidth={720}>
          <Table aria-label="Connections" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Provider</Table.Th>
                <Table.Th>Made</Table.Th>
                <Table.Th>State</Table.Th>
                {mayConnect && <Table.Th>Disconnect</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {connections.map((c) => (
                <Table.Tr key={c.id}>
                  <Table.Td>{c.name}</Table.Td>
                  <Table.Td>
                    {nameOf.get(c.provider) ?? c.provider}
                    {c.externalName ? ` (${c.externalName})` : ''}
                  </Table.Td>
                  <Table.Td>
                    {c.method === 'OAUTH' ? 'Signed in' : 'With a token'}, {when(c.createdAt)}
                  </Table.Td>
                  <Table.Td>{c.status === 'ACTIVE' ? 'Works' : `Broken: ${c.brokenReason ?? 'refused'}`}</Table.Td>
                  {mayConnect && (
                    <Table.Td>
                      <Button
                        size="xs"
                        color="red.9"
                        variant="outline"
                        aria-label={`Disconnect ${c.name}`}
                        loading={disconnected.fetching}
                        onClick={async () => {
                          if (
                            !(await ask({
                              title: `Disconnect ${c.name}?`,
                              body: 'Its destinations are deleted with it.',
                              confirm: 'Disconnect',
                              color: 'red',
                            }))
                          )
                            return;
                          await disconnect({ id: c.id });
                          reload();
                        }}
                      >
                        Disconnect
                      </Button>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableScroll>
      )}
    </Stack>
  );
}
