import { useState } from 'react';
import { Button, Card, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useClient, useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import { Ago, DownloadButtons, Loading, QueryError, TableScroll, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { count } from '../lib/format.ts';

const DatasetsQuery = graphql(`
  query ConsoleDatasets {
    datasets(first: 100) {
      nodes {
        id
        name
        tool
        rowCount
        identityCount
        lastDeliveredAt
      }
    }
    tools {
      name
      title
    }
  }
`);

const DatasetDownload = graphql(`
  query ConsoleDatasetDownload($dataset: String!, $format: DownloadFormat!) {
    dataset(dataset: $dataset) {
      id
      downloadPath(format: $format)
    }
  }
`);

const FORMATS = ['CSV', 'JSON'] as const;

const ClearDataset = graphql(`
  mutation ConsoleClearDataset($dataset: String!) {
    clearDataset(dataset: $dataset) {
      forgotten
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const DeleteDataset = graphql(`
  mutation ConsoleDeleteDataset($dataset: String!) {
    deleteDataset(dataset: $dataset) {
      deletedDatasetId
      userErrors {
        code
        field
        message
      }
    }
  }
`);

export default function Datasets() {
  const client = useClient();
  const [{ data, error }, refetch] = useQuery({ query: DatasetsQuery, requestPolicy: 'cache-and-network' });
  const [cleared, clear] = useMutation(ClearDataset);
  const [deleted, remove] = useMutation(DeleteDataset);
  const [done, setDone] = useState<string | null>(null);
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const titleOf = new Map(data.tools.map((t) => [t.name, t.title]));
  const reload = () => refetch({ requestPolicy: 'network-only' });
  return (
    <Stack>
      <PageTitle title="Datasets">
        A dataset keeps one row a result across the runs that name it. With “only new”, a run delivers and bills only
        the results the dataset has not delivered before. Rows go with their runs’ results after 48 hours; what a
        dataset delivered is remembered until you clear or delete it. Download a dataset’s rows as a file from its row.
      </PageTitle>
      <UserErrors
        errors={[...(cleared.data?.clearDataset.userErrors ?? []), ...(deleted.data?.deleteDataset.userErrors ?? [])]}
      />
      <div role="status" aria-live="polite">
        {done && <Text c="green">{done}</Text>}
      </div>
      {data.datasets.nodes.length === 0 ? (
        <Card withBorder>
          <Title order={3} size="h5">
            No datasets yet
          </Title>
          <Text>
            Name a dataset when you start a tool or save a task (“Dataset” on its form) and its rows collect here.
          </Text>
        </Card>
      ) : (
        <TableScroll label="Datasets" minWidth={720}>
          <Table aria-label="Datasets" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Dataset</Table.Th>
                <Table.Th>Tool</Table.Th>
                <Table.Th>Rows</Table.Th>
                <Table.Th>Results delivered</Table.Th>
                <Table.Th>Last delivery</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.datasets.nodes.map((d) => (
                <Table.Tr key={d.id}>
                  <Table.Td>{d.name}</Table.Td>
                  <Table.Td>{titleOf.get(d.tool) ?? d.tool}</Table.Td>
                  <Table.Td>{count(d.rowCount)}</Table.Td>
                  <Table.Td>{count(d.identityCount)}</Table.Td>
                  <Table.Td>
                    <Ago iso={d.lastDeliveredAt} />
                  </Table.Td>
                  <Table.Td>
                    <Group gap="xs">
                      <DownloadButtons
                        formats={FORMATS}
                        what={d.name}
                        linkOf={async (format) => {
                          const result = await client
                            .query(DatasetDownload, { dataset: d.id, format }, { requestPolicy: 'network-only' })
                            .toPromise();
                          return { path: result.data?.dataset?.downloadPath, result };
                        }}
                      />
                      <Button
                        size="xs"
                        variant="light"
                        aria-label={`Clear ${d.name}`}
                        onClick={async () => {
                          const result = await clear({ dataset: d.id });
                          const forgotten = result.data?.clearDataset.forgotten;
                          if (forgotten != null) setDone(`${d.name}: ${count(forgotten)} results forgotten.`);
                          reload();
                        }}
                      >
                        Clear
                      </Button>
                      <Button
                        size="xs"
                        color="red"
                        variant="light"
                        aria-label={`Delete ${d.name}`}
                        onClick={async () => {
                          const result = await remove({ dataset: d.id });
                          if (result.data?.deleteDataset.deletedDatasetId) setDone(`${d.name} deleted.`);
                          reload();
                        }}
                      >
                        Delete
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableScroll>
      )}
    </Stack>
  );
}
