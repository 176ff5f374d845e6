import { useState, type FormEvent } from 'react';
import { Button, Group, NativeSelect, Stack, Table, Text, TextInput } from '@mantine/core';
import { Link, useNavigate } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { RunStatus, Tool } from '../gql/graphql.ts';
import { Ago, Loading, Money, Pager, QueryError, StatusBadge, TableScroll, usePages } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { count, RUN_STATUS_WORDS } from '../lib/format.ts';

const RunsQuery = graphql(`
  query ConsoleRuns($first: Int, $after: String, $status: RunStatus, $tool: Tool) {
    runs(first: $first, after: $after, status: $status, tool: $tool) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        id
        tool
        status
        itemCount
        cost
        createdAt
      }
    }
    tools {
      name
      title
    }
  }
`);

const STATUSES: RunStatus[] = ['READY', 'RUNNING', 'SUCCEEDED', 'FAILED', 'ABORTING', 'ABORTED', 'TIMED_OUT'];
const PAGE = 20;

export default function Runs() {
  const navigate = useNavigate();
  const [status, setStatus] = useState('');
  const [tool, setTool] = useState('');
  const pages = usePages();
  const [search, setSearch] = useState('');
  const after = pages.after;
  const [{ data, error }] = useQuery({
    query: RunsQuery,
    variables: {
      first: PAGE,
      after,
      status: (status || null) as RunStatus | null,
      tool: (tool || null) as Tool | null,
    },
    requestPolicy: 'cache-and-network',
  });
  const filter = (set: (v: string) => void) => (e: { currentTarget: { value: string } }) => {
    set(e.currentTarget.value);
    pages.reset();
  };
  const find = (event: FormEvent) => {
    event.preventDefault();
    if (search.trim()) navigate(`/runs/${encodeURIComponent(search.trim())}`);
  };
  const titles = new Map(data?.tools.map((t) => [t.name, t.title]));
  return (
    <Stack>
      <PageTitle title="Runs" />
      <Group align="flex-end">
        <NativeSelect
          label="Status"
          value={status}
          onChange={filter(setStatus)}
          data={[
            { value: '', label: 'Any status' },
            ...STATUSES.map((value) => ({ value, label: RUN_STATUS_WORDS[value] })),
          ]}
        />
        <NativeSelect
          label="Tool"
          value={tool}
          onChange={filter(setTool)}
          data={[
            { value: '', label: 'Any tool' },
            ...(data?.tools.map((t) => ({ value: t.name, label: t.title })) ?? []),
          ]}
        />
        <form onSubmit={find} aria-label="Find a run by id">
          <Group align="flex-end">
            <TextInput label="Run id" value={search} onChange={(e) => setSearch(e.currentTarget.value)} />
            <Button type="submit" variant="default">
              Open run
            </Button>
          </Group>
        </form>
      </Group>
      {error ? (
        <QueryError error={error} />
      ) : !data ? (
        <Loading />
      ) : (
        <>
          <Text size="sm">{count(data.runs.totalCount)} runs</Text>
          {data.runs.nodes.length === 0 ? (
            <Text>
              {status || tool ? (
                'No run matches these filters: choose Any status and Any tool to see every run.'
              ) : (
                <>
                  No run yet. <Link to="/tools">Choose a tool</Link> and start one: its rows show up live on its page.
                </>
              )}
            </Text>
          ) : (
            <TableScroll label="Runs" minWidth={640}>
              <Table
                aria-label="Runs"
                data={{
                  head: ['Run', 'Tool', 'Status', 'Rows', 'Cost', 'Started'],
                  body: data.runs.nodes.map((run) => [
                    <Link key="run" to={`/runs/${run.id}`}>
                      {run.id}
                    </Link>,
                    titles.get(run.tool) ?? run.tool,
                    <StatusBadge key="status" status={run.status} />,
                    count(run.itemCount),
                    <Money key="cost" amount={run.cost} />,
                    <Ago key="started" iso={run.createdAt} />,
                  ]),
                }}
              />
            </TableScroll>
          )}
          <Pager pages={pages} pageInfo={data.runs.pageInfo} />
        </>
      )}
    </Stack>
  );
}
