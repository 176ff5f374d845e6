import { useMemo, useState } from 'react';
import { Alert, Button, Group, Progress, Stack, Table, Text } from '@mantine/core';
import {
  createColumnHelper,
  flexRender,
  getCoreRowModel,
  getPaginationRowModel,
  useReactTable,
} from '@tanstack/react-table';
import { useParams } from 'react-router';
import { useClient, useMutation, useQuery, useSubscription } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ConsoleRunToolQuery } from '../gql/graphql.ts';
import { Loading, QueryError, StatusBadge } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { count, usd, when } from '../lib/format.ts';

// The fields the page reads of a run, spread in the documents below; codegen reads the fragment from this call.
graphql(`
  fragment RunPageFields on Run {
    id
    tool
    status
    ended
    statusMessage
    handled
    requested
    itemCount
    estimatedCost
    cost
    createdAt
    finishedAt
    expiresAt
  }
`);

const RunQuery = graphql(`
  query ConsoleRun($id: ID!) {
    run(id: $id) {
      ...RunPageFields
    }
  }
`);

const RunToolQuery = graphql(`
  query ConsoleRunTool($name: Tool!) {
    tool(name: $name) {
      name
      title
      cancellable
      columns {
        key
        field
        header
        description
        leaf
      }
    }
  }
`);

const ProgressSubscription = graphql(`
  subscription ConsoleRunProgress($id: ID!) {
    runProgress(id: $id) {
      ...RunPageFields
    }
  }
`);

const CancelMutation = graphql(`
  mutation ConsoleCancelRun($id: ID!) {
    cancelRun(id: $id) {
      run {
        ...RunPageFields
      }
      userErrors {
        code
        message
      }
    }
  }
`);

const DownloadQuery = graphql(`
  query ConsoleDownloadPath($id: ID!, $format: DownloadFormat!) {
    run(id: $id) {
      id
      downloadPath(format: $format)
    }
  }
`);

type Run = {
  id: string;
  tool: string;
  status: string;
  ended: boolean;
  statusMessage: string;
  handled: number;
  requested: number;
  itemCount: number;
  estimatedCost: string;
  cost: string;
  createdAt: string;
  finishedAt?: string | null;
  expiresAt?: string | null;
};
type Columns = NonNullable<ConsoleRunToolQuery['tool']>['columns'];
type Row = Record<string, unknown>;

const FORMATS = ['CSV', 'JSON', 'NDJSON'] as const;

/** The rows subscription of a tool: the typed row fields its table shows (the scalar columns). */
const itemsDocument = (resultType: string, columns: Columns) => `subscription ConsoleRunItems($id: ID!) {
  runItems(id: $id) { offset results { ... on ${resultType} { ${columns
    .filter((c) => c.leaf)
    .map((c) => c.field)
    .join(' ')} } } }
}`;

const pascal = (tool: string) => tool.toLowerCase().replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());

const cell = (value: unknown) =>
  value === null || value === undefined ? '' : Array.isArray(value) ? value.join('; ') : String(value);

function RowsTable({ runId, tool, columns }: { runId: string; tool: string; columns: Columns }) {
  const shown = useMemo(() => columns.filter((c) => c.leaf), [columns]);
  const document = useMemo(() => itemsDocument(`${pascal(tool)}Result`, columns), [tool, columns]);
  // Rows arrive in batches from their offset; a batch sent again after a reconnect replaces, not repeats.
  const [{ data: rows = [] }] = useSubscription<{ runItems: { offset: number; results: Row[] } }, Row[]>(
    { query: document, variables: { id: runId } },
    (previous = [], batch) => {
      const next = previous.slice(0, batch.runItems.offset);
      return [...next, ...batch.runItems.results];
    },
  );
  const helper = createColumnHelper<Row>();
  const tableColumns = useMemo(
    () =>
      shown.map((c) =>
        helper.accessor((row) => row[c.field], {
          id: c.field,
          header: c.header,
          cell: (info) => cell(info.getValue()),
        }),
      ),
    [shown, helper],
  );
  const table = useReactTable({
    data: rows,
    columns: tableColumns,
    getCoreRowModel: getCoreRowModel(),
    getPaginationRowModel: getPaginationRowModel(),
    initialState: { pagination: { pageSize: 25 } },
    autoResetPageIndex: false,
  });
  const { pageIndex } = table.getState().pagination;
  return (
    <Stack gap="xs">
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: wide tables scroll sideways; the region takes focus so keyboards can scroll it too */}
      <section className="scroll-x" tabIndex={0} aria-label="Result rows, scrollable">
        <Table striped className="rows" aria-label="Result rows">
          <Table.Thead>
            {table.getHeaderGroups().map((group) => (
              <Table.Tr key={group.id}>
                {group.headers.map((header) => (
                  <Table.Th key={header.id}>{flexRender(header.column.columnDef.header, header.getContext())}</Table.Th>
                ))}
              </Table.Tr>
            ))}
          </Table.Thead>
          <Table.Tbody>
            {table.getRowModel().rows.map((row) => (
              <Table.Tr key={row.id}>
                {row.getVisibleCells().map((c) => (
                  <Table.Td key={c.id} title={cell(c.getValue())}>
                    {flexRender(c.column.columnDef.cell, c.getContext())}
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </section>
      <Group>
        <Text size="sm">
          {count(rows.length)} rows · page {pageIndex + 1} of {Math.max(1, table.getPageCount())}
        </Text>
        <Button size="xs" variant="default" onClick={() => table.previousPage()} disabled={!table.getCanPreviousPage()}>
          Previous page
        </Button>
        <Button size="xs" variant="default" onClick={() => table.nextPage()} disabled={!table.getCanNextPage()}>
          Next page
        </Button>
      </Group>
    </Stack>
  );
}

function Downloads({ runId }: { runId: string }) {
  const client = useClient();
  const [error, setError] = useState<string | null>(null);
  // A signed link made on click (it lives minutes); the browser downloads it like any file. A path: it
  // resolves against the address this page was opened at, whatever PUBLIC_URL says.
  const download = async (format: (typeof FORMATS)[number]) => {
    setError(null);
    const result = await client
      .query(DownloadQuery, { id: runId, format }, { requestPolicy: 'network-only' })
      .toPromise();
    const path = result.data?.run?.downloadPath;
    if (!path) return setError(result.error?.graphQLErrors[0]?.message ?? 'The file is not available.');
    const link = document.createElement('a');
    link.href = path;
    link.download = '';
    document.body.append(link);
    link.click();
    link.remove();
  };
  return (
    <Group>
      {FORMATS.map((format) => (
        <Button key={format} variant="light" onClick={() => void download(format)}>
          Download {format}
        </Button>
      ))}
      {error && (
        <Text c="red" role="alert">
          {error}
        </Text>
      )}
    </Group>
  );
}

function RunView({ initial }: { initial: Run }) {
  const [{ data: live }] = useSubscription({ query: ProgressSubscription, variables: { id: initial.id } });
  const [{ data: toolData }] = useQuery({ query: RunToolQuery, variables: { name: initial.tool as never } });
  const [cancelState, cancel] = useMutation(CancelMutation);
  const cancelled = cancelState.data?.cancelRun.run as Run | undefined;
  const run: Run = cancelled && !live ? cancelled : ((live?.runProgress as Run | undefined) ?? initial);
  // The server says whether a status is final (Run.ended), so no list of final statuses is kept here.
  const ended = run.ended;
  // An ended run is done, whatever it handled (a search may find fewer than asked for).
  const percent = ended ? 100 : run.requested > 0 ? Math.min(100, Math.round((run.handled / run.requested) * 100)) : 0;
  const tool = toolData?.tool;
  return (
    <Stack>
      <PageTitle title={`Run ${run.id}`}>{tool ? tool.title : run.tool}</PageTitle>
      <Group>
        <StatusBadge status={run.status} />
        <Text aria-live="polite" data-testid="status-message">
          {run.statusMessage}
        </Text>
      </Group>
      <Progress value={percent} aria-label="Run progress" size="lg" animated={!ended} striped={!ended} />
      <Group gap="xl">
        <Text size="sm">
          Handled {count(run.handled)} of {count(run.requested)} · {count(run.itemCount)} rows
        </Text>
        <Text size="sm">
          Cost so far {usd(run.cost)} (estimate {usd(run.estimatedCost)})
        </Text>
        <Text size="sm">Started {when(run.createdAt)}</Text>
        {run.finishedAt && <Text size="sm">Ended {when(run.finishedAt)}</Text>}
        {run.expiresAt && <Text size="sm">Rows kept until {when(run.expiresAt)}</Text>}
      </Group>
      <Group>
        {tool?.cancellable && !ended && (
          <Button
            color="red"
            variant="outline"
            loading={cancelState.fetching}
            onClick={() => void cancel({ id: run.id })}
          >
            Cancel run
          </Button>
        )}
        {ended && <Downloads runId={run.id} />}
      </Group>
      {cancelState.data?.cancelRun.userErrors.map((e) => (
        <Alert key={e.code} color="red" role="alert">
          {e.message}
        </Alert>
      ))}
      {tool && <RowsTable runId={run.id} tool={run.tool} columns={tool.columns} />}
    </Stack>
  );
}

export default function RunPage() {
  const { runId = '' } = useParams();
  const [{ data, error }] = useQuery({ query: RunQuery, variables: { id: runId } });
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  if (!data.run) return <Alert color="red">No such run in this account.</Alert>;
  return <RunView key={runId} initial={data.run as Run} />;
}
