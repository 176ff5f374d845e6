import { useEffect } from 'react';
import { Alert, Button, Group, List, Stack, Table, Text, Title } from '@mantine/core';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery, useSubscription } from 'urql';
import { graphql } from '../gql/index.ts';
import type { DestinationDeliveryFieldsFragment } from '../gql/graphql.ts';
import { Loading, QueryError, StatusBadge, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { count, toolSlug, when } from '../lib/format.ts';

// The fields the page reads of a delivery, in the list and in each live update.
graphql(`
  fragment DestinationDeliveryFields on Delivery {
    id
    status
    message
    ended
    total
    sent
    created
    updated
    skipped
    failed
    createdAt
    finishedAt
    run {
      id
      tool
    }
    pipeline {
      id
    }
    problems(first: 20) {
      row
      outcome
      reason
    }
  }
`);

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
          ...DestinationDeliveryFields
        }
      }
    }
    destinationKinds {
      kind
      title
    }
  }
`);

const DeliveryLive = graphql(`
  subscription ConsoleDeliveryLive($id: ID!) {
    delivery(id: $id) {
      ...DestinationDeliveryFields
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

type Delivery = DestinationDeliveryFieldsFragment;

/** How often the list looks for deliveries queued since it was read (each one is then followed live). */
const NEW_DELIVERIES_MS = 5_000;

/** One delivery, followed live until it ends: its counts, its message and the rows it did not deliver. */
function DeliveryRows({ initial }: { initial: Delivery }) {
  const [{ data }] = useSubscription({ query: DeliveryLive, variables: { id: initial.id }, pause: initial.ended });
  const d = data?.delivery ?? initial;
  const of = d.pipeline ? `Pipeline ${d.pipeline.id}` : d.run ? `Run ${d.run.id}` : '—';
  return (
    <>
      <Table.Tr aria-label={`Delivery ${d.id}`}>
        <Table.Td>{when(d.createdAt)}</Table.Td>
        <Table.Td>
          {d.run ? <Link to={`/runs/${d.run.id}`}>{of}</Link> : of}
          {d.run && (
            <Text size="xs" c="dimmed">
              {toolSlug(d.run.tool)}
            </Text>
          )}
        </Table.Td>
        <Table.Td>
          <StatusBadge status={d.status} />
          <Text size="sm">{d.message}</Text>
        </Table.Td>
        <Table.Td>
          {count(d.sent)} of {count(d.total)} sent
        </Table.Td>
        <Table.Td>
          {count(d.created)} created, {count(d.updated)} updated
        </Table.Td>
        <Table.Td>
          {count(d.skipped)} skipped, {count(d.failed)} refused
        </Table.Td>
      </Table.Tr>
      {d.problems.length > 0 && (
        <Table.Tr>
          <Table.Td colSpan={6}>
            <Text size="sm" fw={600}>
              Rows not delivered{d.skipped + d.failed > d.problems.length ? ` (the first ${d.problems.length})` : ''}
            </Text>
            <List size="sm" aria-label={`Rows not delivered by ${d.id}`}>
              {d.problems.map((p) => (
                <List.Item key={p.row}>
                  Row {p.row + 1}: {p.outcome === 'SKIPPED' ? 'skipped' : 'refused by the provider'}, {p.reason}
                </List.Item>
              ))}
            </List>
          </Table.Td>
        </Table.Tr>
      )}
    </>
  );
}

export default function DestinationPage() {
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
        <Text c="dimmed">No deliveries yet: rows come here when a run that names this destination ends.</Text>
      ) : (
        <div className="scroll-x">
          <Table aria-label="Deliveries">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Queued</Table.Th>
                <Table.Th>Rows of</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Sent</Table.Th>
                <Table.Th>Records</Table.Th>
                <Table.Th>Not delivered</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {deliveries.map((d) => (
                <DeliveryRows key={d.id} initial={d} />
              ))}
            </Table.Tbody>
          </Table>
        </div>
      )}
      <Group>
        <Button
          color="red"
          variant="outline"
          loading={deleted.fetching}
          onClick={async () => {
            if (!confirm(`Delete ${destination.name} and its delivery log?`)) return;
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
