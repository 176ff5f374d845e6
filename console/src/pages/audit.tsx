import { useState } from 'react';
import { Anchor, Badge, Group, NativeSelect, Stack, Table, Text, TextInput, Tooltip } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { AuditAction, AuditLogFilter } from '../gql/graphql.ts';
import { DownloadButtons, Loading, Pager, QueryError, TableScroll, usePages } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { ago, count } from '../lib/format.ts';

const AuditLogQuery = graphql(`
  query ConsoleAuditLog($first: Int, $after: String, $filter: AuditLogFilter) {
    auditLog(first: $first, after: $after, filter: $filter) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        id
        action
        actionText
        createdAt
        ipAddress
        actor {
          type
          id
          label
        }
        target {
          type
          id
          label
        }
        details {
          name
          value
        }
      }
    }
    auditActions {
      action
      text
    }
  }
`);

const ExportAuditLog = graphql(`
  mutation ConsoleExportAuditLog($format: DownloadFormat!, $filter: AuditLogFilter) {
    exportAuditLog(format: $format, filter: $filter) {
      downloadPath
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const PAGE = 25;
const FORMATS = ['CSV', 'JSON'] as const;

/** The start of a day picked in a date field, in the browser's time zone, as the API takes times. */
const dayStart = (day: string, plusDays = 0) => {
  const date = new Date(`${day}T00:00:00`);
  date.setDate(date.getDate() + plusDays);
  return date.toISOString();
};

/** When, said relative to now, the exact time on hover or focus. */
function Time({ iso }: { iso: string }) {
  const exact = new Date(iso).toLocaleString();
  return (
    <Tooltip label={exact} events={{ hover: true, focus: true, touch: true }}>
      <Text component="time" dateTime={iso} size="sm" tabIndex={0} aria-label={`${ago(iso)}, ${exact}`}>
        {ago(iso)}
      </Text>
    </Tooltip>
  );
}

export default function AuditLog() {
  const [action, setAction] = useState('');
  const [actor, setActor] = useState<{ id: string; label: string } | null>(null);
  const [from, setFrom] = useState('');
  const [through, setThrough] = useState('');
  const pages = usePages();
  const filter: AuditLogFilter = {
    ...(action ? { action: action as AuditAction } : {}),
    ...(actor ? { actorId: actor.id } : {}),
    ...(from ? { since: dayStart(from) } : {}),
    ...(through ? { until: dayStart(through, 1) } : {}),
  };
  const [{ data, error }] = useQuery({
    query: AuditLogQuery,
    variables: { first: PAGE, after: pages.after, filter },
    requestPolicy: 'cache-and-network',
  });
  const [, exportLog] = useMutation(ExportAuditLog);
  const refilter = (set: (value: string) => void) => (event: { currentTarget: { value: string } }) => {
    set(event.currentTarget.value);
    pages.reset();
  };
  return (
    <Stack>
      <PageTitle title="Audit log">
        Who did what in this account: keys, members, sign-ins, connections, connected apps, webhooks, large downloads,
        schedules and exports of this log. Events are kept two years and never change. Only owners and admins see this
        page.
      </PageTitle>
      <Group align="flex-end">
        <NativeSelect
          label="Action"
          value={action}
          onChange={refilter(setAction)}
          data={[
            { value: '', label: 'Any action' },
            ...(data?.auditActions.map((a) => ({ value: a.action, label: a.text })) ?? []),
          ]}
        />
        <TextInput label="From" type="date" value={from} onChange={refilter(setFrom)} />
        <TextInput label="Through" type="date" value={through} onChange={refilter(setThrough)} />
        {actor && (
          <Badge
            size="lg"
            variant="light"
            rightSection={
              <Anchor
                component="button"
                type="button"
                size="xs"
                aria-label={`Show every actor, not only ${actor.label}`}
                onClick={() => {
                  setActor(null);
                  pages.reset();
                }}
              >
                ✕
              </Anchor>
            }
          >
            Actor: {actor.label}
          </Badge>
        )}
        <DownloadButtons
          formats={FORMATS}
          verb="Export"
          what="the audit log"
          linkOf={async (format) => {
            const result = await exportLog({ format, filter });
            const answer = result.data?.exportAuditLog;
            return { path: answer?.downloadPath, result, refused: answer?.userErrors[0]?.message };
          }}
        />
      </Group>
      {error ? (
        <QueryError error={error} />
      ) : !data ? (
        <Loading />
      ) : (
        <>
          <Text size="sm" role="status">
            {count(data.auditLog.totalCount)} {data.auditLog.totalCount === 1 ? 'event' : 'events'}
          </Text>
          <TableScroll label="Audit log" minWidth={720}>
            <Table
              aria-label="Audit log"
              data={{
                head: ['When', 'Actor', 'Action', 'Target', 'Details', 'Address'],
                body: data.auditLog.nodes.map((e) => [
                  <Time key="when" iso={e.createdAt} />,
                  e.actor.id ? (
                    <Anchor
                      key="actor"
                      component="button"
                      type="button"
                      size="sm"
                      aria-label={`Show only what ${e.actor.label} did`}
                      onClick={() => {
                        setActor({ id: e.actor.id ?? '', label: e.actor.label });
                        pages.reset();
                      }}
                    >
                      {e.actor.label}
                    </Anchor>
                  ) : (
                    e.actor.label
                  ),
                  e.actionText,
                  e.target ? (e.target.label ?? e.target.id) : '—',
                  e.details.map((d) => `${d.name}: ${d.value ?? '—'}`).join(', ') || '—',
                  e.ipAddress ?? '—',
                ]),
              }}
            />
          </TableScroll>
          {data.auditLog.nodes.length === 0 && <Text c="dimmed">No events match.</Text>}
          <Pager pages={pages} pageInfo={data.auditLog.pageInfo} />
        </>
      )}
    </Stack>
  );
}
