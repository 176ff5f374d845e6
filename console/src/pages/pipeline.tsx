import { Alert, Button, Group, Modal, Stack, Table, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, useParams } from 'react-router';
import { useClient, useMutation, useQuery, useSubscription } from 'urql';
import { graphql } from '../gql/index.ts';
import type { PipelinePageFieldsFragment } from '../gql/graphql.ts';
import { DownloadButtons, Loading, QueryError, StatusBadge, TableScroll, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { count, usd, when } from '../lib/format.ts';

// The fields the page reads of a pipeline, spread in the documents below; codegen reads the fragment from this call.
graphql(`
  fragment PipelinePageFields on Pipeline {
    id
    status
    statusMessage
    budgetExhausted
    step
    quotedCost
    heldCost
    cost
    itemCount
    datasetName
    onlyNew
    createdAt
    finishedAt
    expiresAt
    steps {
      index
      tool
      title
      quotedCost
      from {
        column
        field
        description
      }
      run {
        id
        status
        statusMessage
        itemCount
        cost
      }
    }
  }
`);

const PipelineQuery = graphql(`
  query ConsolePipeline($id: ID!) {
    pipeline(id: $id) {
      ...PipelinePageFields
    }
  }
`);

const PipelineSubscription = graphql(`
  subscription ConsolePipelineLive($id: ID!) {
    pipeline(id: $id) {
      ...PipelinePageFields
    }
  }
`);

const CancelPipeline = graphql(`
  mutation ConsoleCancelPipeline($id: ID!) {
    cancelPipeline(id: $id) {
      pipeline {
        ...PipelinePageFields
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const PipelineDownload = graphql(`
  query ConsolePipelineDownload($id: ID!, $format: DownloadFormat!) {
    pipeline(id: $id) {
      id
      downloadPath(format: $format)
    }
  }
`);

type Pipeline = PipelinePageFieldsFragment;

const FORMATS = ['CSV', 'JSON'] as const;

function PipelineView({ initial }: { initial: Pipeline }) {
  const client = useClient();
  // The pipeline now, then after every change of it or of its steps' runs; the subscription ends with it.
  const [{ data: live }] = useSubscription({ query: PipelineSubscription, variables: { id: initial.id } });
  const [cancelState, cancel] = useMutation(CancelPipeline);
  const [asking, { open, close }] = useDisclosure(false);
  const cancelled = cancelState.data?.cancelPipeline.pipeline;
  const pipeline: Pipeline = live?.pipeline ?? cancelled ?? initial;
  // It has ended once it has an end time (SUCCEEDED, FAILED or ABORTED); ABORTING has none yet.
  const ended = Boolean(pipeline.finishedAt);
  const confirm = async () => {
    close();
    await cancel({ id: pipeline.id });
  };
  return (
    <Stack>
      <PageTitle title={`Pipeline ${pipeline.id}`}>{pipeline.steps.map((s) => s.title).join(' → ')}</PageTitle>
      <Group role="status" aria-label="Pipeline status">
        <StatusBadge status={pipeline.status} />
        <Text data-testid="status-message">{pipeline.statusMessage}</Text>
      </Group>
      {pipeline.budgetExhausted && (
        <Alert color="yellow" title="The hold ran out">
          The wallet held less than the quote, so the pipeline stopped before its last step. Top up the wallet (Billing)
          and start it again to run the rest.
        </Alert>
      )}
      <Group gap="xl">
        <Text size="sm">{count(pipeline.itemCount)} rows from all steps</Text>
        <Text size="sm">
          Cost so far {usd(pipeline.cost)} (quoted at most {usd(pipeline.quotedCost)}, held {usd(pipeline.heldCost)})
        </Text>
        {pipeline.datasetName && (
          <Text size="sm">
            Dataset {pipeline.datasetName}
            {pipeline.onlyNew ? ' (only new rows)' : ''}
          </Text>
        )}
        <Text size="sm">Started {when(pipeline.createdAt)}</Text>
        {pipeline.finishedAt && <Text size="sm">Ended {when(pipeline.finishedAt)}</Text>}
        {pipeline.expiresAt && <Text size="sm">Rows kept until {when(pipeline.expiresAt)}</Text>}
      </Group>
      <Group>
        {!ended && pipeline.status !== 'ABORTING' && (
          <Button color="red" variant="outline" loading={cancelState.fetching} onClick={open}>
            Cancel pipeline
          </Button>
        )}
        {ended && (
          <DownloadButtons
            formats={FORMATS}
            linkOf={async (format) => {
              const result = await client
                .query(PipelineDownload, { id: pipeline.id, format }, { requestPolicy: 'network-only' })
                .toPromise();
              return { path: result.data?.pipeline?.downloadPath, result };
            }}
          />
        )}
      </Group>
      {ended && (
        <Text size="sm" c="dimmed">
          The download is one table: each row of the first step with what the later steps found for it.
        </Text>
      )}
      <UserErrors errors={cancelState.data?.cancelPipeline.userErrors ?? []} />
      <TableScroll label="Steps" minWidth={720}>
        <Table aria-label="Steps" striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Step</Table.Th>
              <Table.Th>Tool</Table.Th>
              <Table.Th>Fed by</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Rows</Table.Th>
              <Table.Th>Cost</Table.Th>
              <Table.Th>Run</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {pipeline.steps.map((s) => (
              <Table.Tr key={s.index}>
                <Table.Td>{s.index + 1}</Table.Td>
                <Table.Td>{s.title}</Table.Td>
                <Table.Td>{s.from ? s.from.description : 'The input you gave'}</Table.Td>
                <Table.Td>
                  {s.run ? (
                    <>
                      <StatusBadge status={s.run.status} />
                      <Text size="sm">{s.run.statusMessage}</Text>
                    </>
                  ) : (
                    <Text size="sm">{ended ? 'Did not run' : 'Not started yet'}</Text>
                  )}
                </Table.Td>
                <Table.Td>{s.run ? count(s.run.itemCount) : '—'}</Table.Td>
                <Table.Td>
                  {s.run ? usd(s.run.cost) : '—'} (at most {usd(s.quotedCost)})
                </Table.Td>
                <Table.Td>
                  {s.run ? (
                    <Link to={`/runs/${s.run.id}`} aria-label={`Open the run of step ${s.index + 1}`}>
                      {s.run.id}
                    </Link>
                  ) : (
                    '—'
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </TableScroll>
      <Modal opened={asking} onClose={close} title="Cancel this pipeline?" centered>
        <Stack>
          <Text size="sm">
            Its running step is cancelled (the rows it found so far are kept and billed), no later step starts, and the
            rest of the hold comes back to the wallet once the step has stopped.
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Keep it running
            </Button>
            <Button color="red" onClick={() => void confirm()}>
              Cancel pipeline
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}

export default function PipelinePage() {
  const { id = '' } = useParams();
  const [{ data, error }] = useQuery({ query: PipelineQuery, variables: { id }, requestPolicy: 'network-only' });
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  if (!data.pipeline) return <Alert color="red">No such pipeline in this account.</Alert>;
  return <PipelineView key={id} initial={data.pipeline} />;
}
