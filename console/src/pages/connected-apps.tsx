import { Button, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import { Ago, Loading, QueryError, TableScroll, useConfirm, UserErrors } from '../components.tsx';

const ConnectionsQuery = graphql(`
  query ConsoleConnections {
    viewer {
      id
      connections(first: 100) {
        nodes {
          id
          clientName
          redirectHost
          toolsets
          readOnly
          allowedBy {
            id
            email
          }
          createdAt
          lastUsedAt
        }
      }
    }
  }
`);

const RevokeConnection = graphql(`
  mutation ConsoleRevokeConnection($id: ID!) {
    revokeConnection(id: $id) {
      connection {
        id
        revokedAt
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

/**
 * The apps connected to the account's MCP server through OAuth (hosted agents a member allowed at the
 * consent page), beside the API keys: what each may use, and Revoke.
 */
export function ConnectedApps() {
  const [confirmation, ask] = useConfirm();
  const [{ data, error }, refetch] = useQuery({ query: ConnectionsQuery, requestPolicy: 'cache-and-network' });
  const [revoking, revoke] = useMutation(RevokeConnection);
  const userErrors = revoking.data?.revokeConnection.userErrors ?? [];
  return (
    <Stack>
      {confirmation}
      <Title order={3}>Connected apps</Title>
      <Text size="sm" c="dimmed">
        Hosted agents connected to the MCP server through OAuth. Each acts with the current role of the member who
        allowed it, on the toolsets they chose; revoking one stops its tokens at once.
      </Text>
      <UserErrors errors={userErrors} />
      {error ? (
        <QueryError error={error} />
      ) : !data ? (
        <Loading />
      ) : data.viewer.connections.nodes.length === 0 ? (
        <Text size="sm">No app is connected.</Text>
      ) : (
        <TableScroll label="Connected apps" minWidth={720}>
          <Table
            aria-label="Connected apps"
            data={{
              head: ['App', 'Returns to', 'Toolsets', 'Allowed by', 'Created', 'Last used', 'Actions'],
              body: data.viewer.connections.nodes.map((app) => [
                app.clientName,
                app.redirectHost,
                `${app.toolsets.map((t) => t.toLowerCase()).join(', ')}${app.readOnly ? ' (read-only)' : ''}`,
                app.allowedBy?.email ?? '—',
                <Ago key="createdAt" iso={app.createdAt} />,
                <Ago key="lastUsedAt" iso={app.lastUsedAt} />,
                <Button
                  key="revoke"
                  size="xs"
                  color="red"
                  variant="outline"
                  loading={revoking.fetching && revoking.operation?.variables.id === app.id}
                  aria-label={`Revoke ${app.clientName}`}
                  onClick={async () => {
                    if (
                      !(await ask({
                        title: `Revoke “${app.clientName}”?`,
                        body: 'Its tokens stop working; it must be allowed again.',
                        confirm: 'Revoke',
                        color: 'red',
                      }))
                    )
                      return;
                    await revoke({ id: app.id });
                    refetch({ requestPolicy: 'network-only' });
                  }}
                >
                  Revoke
                </Button>,
              ]),
            }}
          />
        </TableScroll>
      )}
    </Stack>
  );
}
