import { Alert, Button, Stack, Table } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import { Ago, Loading, QueryError, TableScroll, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { when } from '../lib/format.ts';

const SessionsQuery = graphql(`
  query ConsoleSessions {
    currentUser {
      id
      email
    }
    sessions(first: 100) {
      nodes {
        id
        createdAt
        lastSeenAt
        expiresAt
        userAgent
        ipAddress
        current
      }
    }
  }
`);

const RevokeSession = graphql(`
  mutation ConsoleRevokeSession($id: ID!) {
    revokeSession(id: $id) {
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const SignOutEverywhere = graphql(`
  mutation ConsoleSignOutEverywhere {
    signOutEverywhere {
      revokedSessionCount
      userErrors {
        code
        field
        message
      }
    }
  }
`);

export default function Sessions({ onSignedOut }: { onSignedOut(): void }) {
  const [{ data, error }, refetch] = useQuery({ query: SessionsQuery, requestPolicy: 'cache-and-network' });
  const [revoked, revoke] = useMutation(RevokeSession);
  const [everywhere, signOutEverywhere] = useMutation(SignOutEverywhere);
  return (
    <Stack>
      <PageTitle title="Sessions">
        Where you are signed in. Signing out everywhere ends every session of yours, this one included.
      </PageTitle>
      <div>
        <Button
          color="red"
          loading={everywhere.fetching}
          onClick={async () => {
            const result = await signOutEverywhere({});
            if (result.data?.signOutEverywhere.userErrors.length === 0) onSignedOut();
          }}
        >
          Sign out everywhere
        </Button>
      </div>
      <UserErrors
        errors={[
          ...(revoked.data?.revokeSession.userErrors ?? []),
          ...(everywhere.data?.signOutEverywhere.userErrors ?? []),
        ]}
      />
      {everywhere.error && <Alert color="red">{everywhere.error.message}</Alert>}
      {error ? (
        <QueryError error={error} />
      ) : !data ? (
        <Loading />
      ) : (
        <TableScroll label="Sessions" minWidth={640}>
          <Table
            aria-label="Sessions"
            data={{
              head: ['Browser', 'Address', 'Signed in', 'Last seen', 'End'],
              body: data.sessions.nodes.map((s) => [
                s.userAgent ?? '—',
                s.ipAddress ?? '—',
                <Ago key="signed-in" iso={s.createdAt} />,
                <Ago key="seen" iso={s.lastSeenAt} />,
                s.current ? (
                  'This session'
                ) : (
                  <Button
                    key="end"
                    size="xs"
                    variant="outline"
                    color="red"
                    aria-label={`End the session signed in ${when(s.createdAt)}`}
                    onClick={async () => {
                      await revoke({ id: s.id });
                      refetch({ requestPolicy: 'network-only' });
                    }}
                  >
                    End
                  </Button>
                ),
              ]),
            }}
          />
        </TableScroll>
      )}
    </Stack>
  );
}
