import { List, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import { useSubscription } from 'urql';
import { graphql } from './gql/index.ts';
import type { DeliveryRowFieldsFragment } from './gql/graphql.ts';
import { Ago, StatusBadge, TableScroll } from './components.tsx';
import { count, toolSlug } from './lib/format.ts';

/**
 * The deliveries table of the destination page and the run page: each delivery followed live with the
 * `delivery` subscription until it ends.
 */

// The fields a row reads of a delivery, in a page's list and in each live update.
graphql(`
  fragment DeliveryRowFields on Delivery {
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
    destination {
      id
      name
    }
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

const DeliveryLive = graphql(`
  subscription ConsoleDeliveryLive($id: ID!) {
    delivery(id: $id) {
      ...DeliveryRowFields
    }
  }
`);

export type Delivery = DeliveryRowFieldsFragment;

/** What a row names beside the delivery: the rows it sends (a destination's page) or where they go (a run's). */
type Names = 'source' | 'destination';

const headersOf = (names: Names) => [
  'Queued',
  names === 'source' ? 'Rows of' : 'Destination',
  'Status',
  'Sent',
  'Records',
  'Not delivered',
];

function Named({ d, names }: { d: Delivery; names: Names }) {
  if (names === 'destination')
    return d.destination ? <Link to={`/destinations/${d.destination.id}`}>{d.destination.name}</Link> : '—';
  if (d.pipeline) return <Link to={`/pipelines/${d.pipeline.id}`}>Pipeline {d.pipeline.id}</Link>;
  if (!d.run) return '—';
  return (
    <>
      <Link to={`/runs/${d.run.id}`}>Run {d.run.id}</Link>
      <Text size="xs" c="dimmed">
        {toolSlug(d.run.tool)}
      </Text>
    </>
  );
}

/** One delivery, followed live until it ends: its counts, its message and the rows it did not deliver. */
function DeliveryRows({ initial, names }: { initial: Delivery; names: Names }) {
  const [{ data }] = useSubscription({ query: DeliveryLive, variables: { id: initial.id }, pause: initial.ended });
  const d = data?.delivery ?? initial;
  return (
    <>
      <Table.Tr aria-label={`Delivery ${d.id}`}>
        <Table.Td>
          <Ago iso={d.createdAt} />
        </Table.Td>
        <Table.Td>
          <Named d={d} names={names} />
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

/**
 * Deliveries, newest first, each followed live; `names` says what each row names beside it: the run or
 * pipeline whose rows it sends, or the destination they go to.
 */
export function DeliveriesTable({ deliveries, names }: { deliveries: readonly Delivery[]; names: Names }) {
  return (
    <TableScroll label="Deliveries" minWidth={720}>
      <Table aria-label="Deliveries">
        <Table.Thead>
          <Table.Tr>
            {headersOf(names).map((h) => (
              <Table.Th key={h}>{h}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {deliveries.map((d) => (
            <DeliveryRows key={d.id} initial={d} names={names} />
          ))}
        </Table.Tbody>
      </Table>
    </TableScroll>
  );
}
