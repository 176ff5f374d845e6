import { useMemo, useState } from 'react';
import { Alert, Button, Stack, Table, Text, Title } from '@mantine/core';
import { useClient, useQuery } from 'urql';
import { graphql } from './gql/index.ts';
import { Ago, Loading, Pager, QueryError, TableScroll, usePages } from './components.tsx';
import { count } from './lib/format.ts';
import { enrichedName, kindOfJob, resultColumns, saveCsv, withFound } from './enrichment-kinds.ts';

/**
 * The account's history of enrichment jobs (GraphQL `enrichmentJobs`): every file enriched from this
 * page, newest first, kept on the server, so it is there after navigating away and on other devices.
 * A job's rows can be downloaded again while they are kept (48 hours).
 */

const JobsQuery = graphql(`
  query ConsoleEnrichmentJobs($first: Int, $after: String) {
    enrichmentJobs(first: $first, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        id
        kind
        fileName
        total
        matched
        notFound
        skipped
        createdAt
        rowsAvailable
      }
    }
  }
`);

const JobRowsQuery = graphql(`
  query ConsoleEnrichmentJobRows($id: ID!) {
    enrichmentJob(id: $id) {
      id
      kind
      fileName
      sentRows {
        row
        fields {
          name
          value
        }
      }
      skippedRows {
        row
        reasons
      }
      leadRows {
        ...EnrichedRow
      }
      businessRows {
        ...EnrichedBusinessRow
      }
    }
  }
`);

const PAGE = 10;

export function EnrichmentHistory() {
  const pages = usePages();
  const client = useClient();
  const [problem, setProblem] = useState<string | null>(null);
  const [downloading, setDownloading] = useState<string | null>(null);
  // A new job refreshes the list even while it is empty (no EnrichmentJob in it to invalidate); one
  // context object for every render, as a new one would ask again.
  const context = useMemo(() => ({ additionalTypenames: ['EnrichmentJob'] }), []);
  const [{ data, error }] = useQuery({ query: JobsQuery, variables: { first: PAGE, after: pages.after }, context });

  const download = async (id: string) => {
    setProblem(null);
    setDownloading(id);
    const result = await client.query(JobRowsQuery, { id }, { requestPolicy: 'network-only' }).toPromise();
    setDownloading(null);
    const job = result.data?.enrichmentJob;
    const rows = withFound(job?.leadRows ?? job?.businessRows);
    if (!job || !rows || !job.sentRows)
      return setProblem(
        result.error?.message ?? 'The rows of this job are no longer kept; the counts stay in the history.',
      );
    const kind = kindOfJob(job.kind);
    const reasons = new Map(job.skippedRows?.map((s) => [s.row, s.reasons]));
    saveCsv(
      enrichedName(job.fileName),
      rows.map((row, i) => ({
        row: i + 1,
        ...Object.fromEntries(job.sentRows?.[i]?.fields.map((f) => [f.name, f.value]) ?? []),
        ...resultColumns(kind, row, reasons.get(i + 1)),
      })),
    );
  };

  return (
    <Stack component="section" aria-labelledby="enrichment-history">
      <Title order={2} size="h3" id="enrichment-history">
        History
      </Title>
      <Text size="sm" c="dimmed">
        Files enriched in this account, newest first. Their rows can be downloaded again for 48 hours; the counts stay.
      </Text>
      {problem && (
        <Alert color="red" role="alert">
          {problem}
        </Alert>
      )}
      {error ? (
        <QueryError error={error} />
      ) : !data ? (
        <Loading />
      ) : data.enrichmentJobs.totalCount === 0 ? (
        <Text c="dimmed">No files enriched yet.</Text>
      ) : (
        <>
          <TableScroll label="Enrichment history" minWidth={760}>
            <Table
              aria-label="Enrichment history"
              data={{
                head: ['File', 'What', 'Rows', 'Matched', 'Not found', 'Skipped', 'When', 'Rows kept'],
                body: data.enrichmentJobs.nodes.map((job) => [
                  job.fileName,
                  kindOfJob(job.kind).label,
                  count(job.total),
                  count(job.matched),
                  count(job.notFound),
                  count(job.skipped),
                  <Ago key="when" iso={job.createdAt} />,
                  job.rowsAvailable ? (
                    <Button
                      key="download"
                      size="xs"
                      variant="light"
                      loading={downloading === job.id}
                      aria-label={`Download ${job.fileName} enriched`}
                      onClick={() => void download(job.id)}
                    >
                      Download CSV
                    </Button>
                  ) : (
                    'Expired'
                  ),
                ]),
              }}
            />
          </TableScroll>
          <Text size="sm">
            {count(data.enrichmentJobs.totalCount)} {data.enrichmentJobs.totalCount === 1 ? 'file' : 'files'}
          </Text>
          <Pager pages={pages} pageInfo={data.enrichmentJobs.pageInfo} />
        </>
      )}
    </Stack>
  );
}
