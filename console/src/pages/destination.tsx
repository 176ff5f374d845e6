import { useEffect } from 'react';
import { Alert, Button, Group, Stack, Text, Title } from '@mantine/core';
import { useNavigate, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import { Loading, QueryError, useConfirm, UserErrors } from '../components.tsx';
import { DeliveriesTable } from '../deliveries.tsx';
import { PageTitle } from '../Shell.tsx';
import { toolSlug, when } from '../lib/format.ts';

const DestinationQuery = graphql(`
  query ConsoleDestination($id: ID!) {
    destination(id: $id) {
      id
      name
      kind
      paused
      pausedReason
      createdAt
      connection {
        name
        status
        brokenReason
      }
      settings {
        name
        value
      }
      mapping {
        tool
        column
        field
      }
      deliveries(first: 20) {
        nodes {
          ...DeliveryRowFields
        }
      }
    }
    destinationKinds {
      kind
      title
    }
  }
`);

const ResumeDestination = graphql(`
  mutation ConsoleResumeDestination($id: ID!) {
    resumeDestination(id: $id) {
      destination {
        id
        paused
        pausedReason
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const DeleteDestination = graphql(`
  mutation ConsoleDeleteDestination($id: ID!) {
    deleteDestination(id: $id) {
      deletedDestinationId
      userErrors {
        code
        field
        message
      }
    }
  }
`);

/** How often the list looks for deliveries queued since it was read (each one is then followed live). */
const NEW_DELIVERIES_MS = 5_000;

export default function DestinationPage() {
  const [confirmation, ask] = useConfirm();
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const [{ data, error }, refetch] = useQuery({
    query: DestinationQuery,
    variables: { id },
    requestPolicy: 'cache-and-network',
  });
  const [resumed, resume] = useMutation(ResumeDestination);
  const [deleted, remove] = useMutation(DeleteDestination);
  useEffect(() => {
    const timer = setInterval(() => refetch({ requestPolicy: 'network-only' }), NEW_DELIVERIES_MS);
    return () => clearInterval(timer);
  }, [refetch]);
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const destination = data.destination;
  if (!destination) return <Alert color="red">No such destination in this account.</Alert>;
  const title = data.destinationKinds.find((k) => k.kind === destination.kind)?.title ?? destination.kind;
  const paused = resumed.data?.resumeDestination.destination?.paused ?? destination.paused;
  const deliveries = destination.deliveries.nodes;
  return (
    <Stack>
      {confirmation}
      <PageTitle title={`Destination ${destination.name}`}>{title}</PageTitle>
      <Group gap="xl">
        <Text size="sm">
          Connection: {destination.connection?.name ?? '—'}
          {destination.connection?.status === 'BROKEN' ? ` (broken: ${destination.connection.brokenReason})` : ''}
        </Text>
        {destination.settings.map((s) => (
          <Text size="sm" key={s.name}>
            {s.name}: {s.value}
          </Text>
        ))}
        <Text size="sm">Made {when(destination.createdAt)}</Text>
      </Group>
      {destination.mapping.length > 0 && (
        <Text size="sm">
          Changed from the defaults:{' '}
          {destination.mapping.map((m) => `${toolSlug(m.tool)} ${m.column} → ${m.field ?? 'not sent'}`).join(', ')}
        </Text>
      )}
      {paused ? (
        <Alert color="yellow" title="Paused" role="status">
          <Text size="sm">{destination.pausedReason ?? 'It takes no deliveries for now.'}</Text>
          <Button mt="xs" size="xs" loading={resumed.fetching} onClick={() => void resume({ id: destination.id })}>
            Resume
          </Button>
        </Alert>
      ) : (
        <Text size="sm">It takes deliveries: pick it when you start a tool, a pipeline or a saved task.</Text>
      )}
      <UserErrors
        errors={[
          ...(resumed.data?.resumeDestination.userErrors ?? []),
          ...(deleted.data?.deleteDestination.userErrors ?? []),
        ]}
      />
      <Title order={3} size="h4">
        Deliveries
      </Title>
      {deliveries.length === 0 ? (
        <Text c="dimmed">
          No deliveries yet: rows come here when a run or a pipeline that names this destination ends.
        </Text>
      ) : (
        <DeliveriesTable deliveries={deliveries} names="source" />
      )}
      <Group>
        <Button
          color="red"
          variant="outline"
          loading={deleted.fetching}
          onClick={async () => {
            if (
              !(await ask({
                title: `Delete ${destination.name}?`,
                body: 'Its delivery log is deleted with it.',
                confirm: 'Delete',
                color: 'red',
              }))
            )
              return;
            const result = await remove({ id: destination.id });
            if (result.data?.deleteDestination.deletedDestinationId) navigate('/destinations');
          }}
        >
          Delete destination
        </Button>
      </Group>
    </Stack>
  );
}
