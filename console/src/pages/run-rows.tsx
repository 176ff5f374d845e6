import { useEffect, useMemo, useRef, useState } from 'react';
import { Button, Checkbox, Group, Popover, Stack, Table, Text, TextInput, UnstyledButton } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery, useSubscription } from 'urql';
import type { ConsoleRunToolQuery } from '../gql/graphql.ts';
import { Pager, TableScroll, usePages } from '../components.tsx';
import { cellText } from '../lib/cell-text.ts';
import { count } from '../lib/format.ts';

/**
 * A run's rows as a dataset view: a page of them at a time, read from the server (`Run.results`
 * with `orderBy` and `search`), never the whole run in the browser. While the run goes on, its first
 * page in stored order comes live from `runItems` (and stops once full); every other view is read
 * again, at most once a second, as rows arrive.
 */

export type Columns = NonNullable<ConsoleRunToolQuery['tool']>['columns'];
type Column = Columns[number];
type Row = Record<string, unknown>;
type Sort = { column: string; direction: 'ASC' | 'DESC' } | null;
type Page = {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
  nodes: Row[];
};

export const PAGE_SIZE = 25;

const pascal = (tool: string) => tool.toLowerCase().replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());

const selection = (tool: string, columns: Columns) =>
  `... on ${pascal(tool)}Result { ${columns
    .filter((c) => c.leaf)
    .map((c) => c.field)
    .join(' ')} }`;

/** The rows query of a tool: its row type's scalar fields (built from `tool(name:)`, as the form is). */
const rowsDocument = (tool: string, columns: Columns) => `query ConsoleRunRows(
  $id: ID!, $first: Int, $after: String, $orderBy: RunResultOrder, $search: String
) {
  run(id: $id) {
    id
    results(first: $first, after: $after, orderBy: $orderBy, search: $search) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { ${selection(tool, columns)} }
    }
  }
}`;

/** The first rows of a run in flight, as they are stored. */
const liveDocument = (tool: string, columns: Columns) => `subscription ConsoleRunItems($id: ID!) {
  runItems(id: $id) { offset results { ${selection(tool, columns)} } }
}`;

/** A cell in words (lib/cell-text.ts), a declared code as its column's words for it. */
export const columnText = (column: Pick<Column, 'values'>, value: unknown): string =>
  cellText(value, Object.fromEntries(column.values.map((v) => [v.value, v.label])));

const ARIA_SORT = { ASC: 'ascending', DESC: 'descending' } as const;

/** Sorting by a header: ascending, then descending, then the stored order again. */
const nextSort = (sort: Sort, column: string): Sort =>
  sort?.column !== column
    ? { column, direction: 'ASC' }
    : sort.direction === 'ASC'
      ? { column, direction: 'DESC' }
      : null;

function ColumnPicker({
  columns,
  hidden,
  setHidden,
}: {
  columns: Columns;
  hidden: ReadonlySet<string>;
  setHidden(next: Set<string>): void;
}) {
  return (
    <Popover position="bottom-start" shadow="md" trapFocus>
      <Popover.Target>
        <Button variant="default">
          Columns ({columns.length - hidden.size} of {columns.length})
        </Button>
      </Popover.Target>
      <Popover.Dropdown>
        <Stack gap={6} mah={360} style={{ overflowY: 'auto' }} role="group" aria-label="Columns shown">
          <Group gap="xs">
            <Button size="compact-xs" variant="subtle" onClick={() => setHidden(new Set())}>
              Show all
            </Button>
            <Button
              size="compact-xs"
              variant="subtle"
              onClick={() => setHidden(new Set(columns.slice(1).map((c) => c.key)))}
            >
              Show only the first
            </Button>
          </Group>
          {columns.map((c) => (
            <Checkbox
              key={c.key}
              label={c.label}
              checked={!hidden.has(c.key)}
              onChange={(e) => {
                const next = new Set(hidden);
                if (e.currentTarget.checked) next.delete(c.key);
                else next.add(c.key);
                setHidden(next);
              }}
            />
          ))}
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}

export function RowsTable({
  runId,
  tool,
  columns,
  ended,
  itemCount,
}: {
  runId: string;
  tool: string;
  columns: Columns;
  ended: boolean;
  itemCount: number;
}) {
  const leaves = useMemo(() => columns.filter((c) => c.leaf), [columns]);
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const [sort, setSort] = useState<Sort>(null);
  const [searchText, setSearchText] = useState('');
  const [search] = useDebouncedValue(searchText.trim(), 300);
  const pages = usePages();
  // A new view starts at its first page (`reset` is a new function each render: not a dependency).
  // biome-ignore lint/correctness/useExhaustiveDependencies: sort and search are what the view changes with
  useEffect(() => pages.reset(), [sort, search]);
  const plainFirstPage = !sort && !search && pages.after === null;
  const live = !ended && plainFirstPage;

  // The live first page: rows as stored, kept to one page; the subscription ends once the page is full.
  const [liveRows, setLiveRows] = useState<Row[]>([]);
  const liveQuery = useMemo(() => liveDocument(tool, leaves), [tool, leaves]);
  useSubscription<{ runItems: { offset: number; results: Row[] } }>(
    { query: liveQuery, variables: { id: runId }, pause: !live || liveRows.length >= PAGE_SIZE },
    (_, batch) => {
      const { offset, results } = batch.runItems;
      if (offset < PAGE_SIZE) setLiveRows((held) => [...held.slice(0, offset), ...results].slice(0, PAGE_SIZE));
      return batch;
    },
  );

  const query = useMemo(() => rowsDocument(tool, leaves), [tool, leaves]);
  const variables = {
    id: runId,
    first: PAGE_SIZE,
    after: pages.after,
    orderBy: sort ? { column: sort.column, direction: sort.direction } : null,
    search: search || null,
  };
  const [{ data, fetching, error, operation }, reexecute] = useQuery<{ run: { results: Page | null } | null }>({
    query,
    variables,
    requestPolicy: 'cache-and-network',
  });
  // The answer shown is the current view's (not the page before while the next one is read).
  const current = JSON.stringify(operation?.variables) === JSON.stringify(variables);
  // A view of a run in flight follows its rows, read again at most once a second; once more at its end.
  const lastRead = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: read again as the run's rows grow (itemCount)
  useEffect(() => {
    // The first read is the query's own.
    if (lastRead.current === 0) {
      lastRead.current = Date.now();
      return;
    }
    const wait = Math.max(0, lastRead.current + 1000 - Date.now());
    const timer = setTimeout(() => {
      lastRead.current = Date.now();
      reexecute({ requestPolicy: 'network-only' });
    }, wait);
    return () => clearTimeout(timer);
  }, [itemCount, ended, reexecute]);

  const read = current ? (data?.run?.results ?? null) : null;
  // The live rows while they are ahead of what was read.
  const page: Page | null =
    live && liveRows.length > (read?.nodes.length ?? 0)
      ? {
          totalCount: Math.max(itemCount, liveRows.length),
          pageInfo: read?.pageInfo ?? { hasNextPage: false },
          nodes: liveRows,
        }
      : // While the next view is read, the last one stays in place.
        (read ?? data?.run?.results ?? null);
  const shown = leaves.filter((c) => !hidden.has(c.key));
  const first = pages.index * PAGE_SIZE;
  const nodes = page?.nodes ?? [];

  return (
    <Stack gap="xs">
      <Group align="end">
        <TextInput
          label="Search rows"
          placeholder="Any value, e.g. a name or a city"
          value={searchText}
          onChange={(e) => setSearchText(e.currentTarget.value)}
          w={300}
        />
        <ColumnPicker columns={leaves} hidden={hidden} setHidden={setHidden} />
      </Group>
      {error && (
        <Text c="red.9" role="alert">
          {error.graphQLErrors[0]?.message ?? error.message}
        </Text>
      )}
      <TableScroll label="Result rows" minWidth={Math.max(600, shown.length * 140)}>
        <Table striped className="rows" aria-label="Result rows" aria-busy={fetching}>
          <Table.Thead>
            <Table.Tr>
              {shown.map((c) => (
                <Table.Th
                  key={c.key}
                  aria-sort={sort?.column === c.key ? ARIA_SORT[sort.direction] : 'none'}
                  title={c.description}
                >
                  <UnstyledButton fw={700} fz="sm" onClick={() => setSort((s) => nextSort(s, c.key))}>
                    {c.label}
                    <span aria-hidden="true">
                      {sort?.column === c.key ? (sort.direction === 'ASC' ? ' ▲' : ' ▼') : ''}
                    </span>
                  </UnstyledButton>
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {nodes.map((row, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a page's rows by their position in the view
              <Table.Tr key={first + i}>
                {shown.map((c) => {
                  const text = columnText(c, row[c.field]);
                  return (
                    <Table.Td key={c.key} title={text}>
                      {text}
                    </Table.Td>
                  );
                })}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </TableScroll>
      {read && nodes.length === 0 && (
        <Text size="sm">{search ? 'No rows contain that text.' : 'No rows stored yet.'}</Text>
      )}
      <Group>
        <Text size="sm" aria-live="polite">
          {!read && !(live && page)
            ? 'Reading the rows…'
            : page && nodes.length > 0
              ? `Rows ${count(first + 1)}–${count(first + nodes.length)} of ${count(page.totalCount)}`
              : `${count(page?.totalCount ?? 0)} rows`}
          {search && read ? ` containing “${search}”` : ''}
        </Text>
        <Pager pages={pages} pageInfo={read?.pageInfo ?? { hasNextPage: false }} />
      </Group>
    </Stack>
  );
}
