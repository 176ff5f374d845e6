import { useState, type FormEvent } from 'react';
import {
  Badge,
  Button,
  Card,
  Checkbox,
  Group,
  NativeSelect,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useNavigate } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import { Ago, Loading, QueryError, TableScroll, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { when } from '../lib/format.ts';

const SchedulesQuery = graphql(`
  query ConsoleSchedules {
    tasks(first: 100) {
      nodes {
        id
        name
        tool
        datasetName
        onlyNew
      }
    }
    schedules(first: 100) {
      nodes {
        id
        cron
        timezone
        exclusive
        paused
        pausedReason
        nextFireAt
        lastFiredAt
        task {
          id
          name
        }
        fires(first: 1) {
          nodes {
            outcome
            reason
          }
        }
      }
    }
    tools {
      name
      title
    }
  }
`);

const StartTask = graphql(`
  mutation ConsoleStartTask($task: String!) {
    startTask(task: $task) {
      run {
        id
      }
      pipeline {
        id
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const CreateSchedule = graphql(`
  mutation ConsoleCreateSchedule($task: String!, $cron: String!, $timezone: String, $exclusive: Boolean) {
    createSchedule(task: $task, cron: $cron, timezone: $timezone, exclusive: $exclusive) {
      schedule {
        id
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const PauseSchedule = graphql(`
  mutation ConsolePauseSchedule($schedule: String!) {
    pauseSchedule(schedule: $schedule) {
      schedule {
        id
        paused
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const ResumeSchedule = graphql(`
  mutation ConsoleResumeSchedule($schedule: String!) {
    resumeSchedule(schedule: $schedule) {
      schedule {
        id
        paused
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const DeleteSchedule = graphql(`
  mutation ConsoleDeleteSchedule($schedule: String!) {
    deleteSchedule(schedule: $schedule) {
      deletedId
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const DeleteTask = graphql(`
  mutation ConsoleDeleteTask($task: String!) {
    deleteTask(task: $task) {
      deletedId
      userErrors {
        code
        field
        message
      }
    }
  }
`);

/** The browser's time zone, the form's default: a schedule reads its expression in it. */
const localZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

export default function Schedules() {
  const navigate = useNavigate();
  const [{ data, error }, refetch] = useQuery({ query: SchedulesQuery, requestPolicy: 'cache-and-network' });
  const [started, start] = useMutation(StartTask);
  const [created, create] = useMutation(CreateSchedule);
  const [, pause] = useMutation(PauseSchedule);
  const [, resume] = useMutation(ResumeSchedule);
  const [, removeSchedule] = useMutation(DeleteSchedule);
  const [, removeTask] = useMutation(DeleteTask);
  const [task, setTask] = useState('');
  const [cron, setCron] = useState('0 9 * * 1');
  const [timezone, setTimezone] = useState(localZone);
  const [exclusive, setExclusive] = useState(true);
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const titleOf = new Map(data.tools.map((t) => [t.name, t.title]));
  const tasks = data.tasks.nodes;
  const chosen = task || tasks[0]?.id || '';
  const fieldError = (field: string) =>
    created.data?.createSchedule.userErrors.find((e) => e.field?.at(-1) === field)?.message;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await create({ task: chosen, cron, timezone, exclusive });
    if (result.data?.createSchedule.schedule) reload();
  };
  return (
    <Stack>
      <PageTitle title="Schedules">
        A task is a tool with a saved input (save one from a tool’s form). A schedule runs it on a cron expression in a
        time zone: “0 9 * * 1” is Mondays at 9:00. When a run is still going at the next time, that time is skipped; a
        schedule whose account cannot pay pauses itself and says why.
      </PageTitle>
      <UserErrors errors={started.data?.startTask.userErrors ?? []} />
      <Title order={2} size="h4">
        Tasks
      </Title>
      {tasks.length === 0 ? (
        <Card withBorder>
          <Text>No tasks yet: open a tool, fill its form and choose “Save as task”.</Text>
        </Card>
      ) : (
        <TableScroll label="Tasks" minWidth={720}>
          <Table aria-label="Tasks" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Task</Table.Th>
                <Table.Th>Tool</Table.Th>
                <Table.Th>Dataset</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {tasks.map((t) => (
                <Table.Tr key={t.id}>
                  <Table.Td>{t.name}</Table.Td>
                  <Table.Td>{titleOf.get(t.tool) ?? t.tool}</Table.Td>
                  <Table.Td>{t.datasetName ? `${t.datasetName}${t.onlyNew ? ' (only new)' : ''}` : '—'}</Table.Td>
                  <Table.Td>
                    <Group gap="xs">
                      <Button
                        size="xs"
                        aria-label={`Run ${t.name} now`}
                        onClick={async () => {
                          const result = await start({ task: t.id });
                          const { run, pipeline } = result.data?.startTask ?? {};
                          if (run) navigate(`/runs/${run.id}`);
                          else if (pipeline) navigate(`/pipelines/${pipeline.id}`);
                        }}
                      >
                        Run now
                      </Button>
                      <Button
                        size="xs"
                        color="red"
                        variant="light"
                        aria-label={`Delete ${t.name}`}
                        onClick={async () => {
                          await removeTask({ task: t.id });
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
      {tasks.length > 0 && (
        <form onSubmit={submit} noValidate aria-label="Schedule a task">
          <Card withBorder>
            <Stack maw={560}>
              <Title order={3} size="h5">
                Schedule a task
              </Title>
              <NativeSelect
                label="Task"
                value={chosen}
                onChange={(e) => setTask(e.currentTarget.value)}
                data={tasks.map((t) => ({ value: t.id, label: t.name }))}
              />
              <TextInput
                label="When (cron expression)"
                description="Minute, hour, day of month, month, day of week: “0 9 * * 1” is Mondays at 9:00."
                value={cron}
                onChange={(e) => setCron(e.currentTarget.value)}
                error={fieldError('cron')}
              />
              <TextInput
                label="Time zone"
                description="The zone the time is read in, e.g. America/Denver."
                value={timezone}
                onChange={(e) => setTimezone(e.currentTarget.value)}
                error={fieldError('timezone')}
              />
              <Checkbox
                label="Skip a run while the one before is still going"
                checked={exclusive}
                onChange={(e) => setExclusive(e.currentTarget.checked)}
              />
              <Group>
                <Button type="submit" loading={created.fetching}>
                  Schedule
                </Button>
              </Group>
            </Stack>
          </Card>
        </form>
      )}
      <Title order={2} size="h4">
        Schedules
      </Title>
      {data.schedules.nodes.length === 0 ? (
        <Text c="dimmed">No schedules yet.</Text>
      ) : (
        <TableScroll label="Schedules" minWidth={720}>
          <Table aria-label="Schedules" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Task</Table.Th>
                <Table.Th>When</Table.Th>
                <Table.Th>Next run</Table.Th>
                <Table.Th>Last run</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.schedules.nodes.map((s) => {
                const last = s.fires.nodes[0];
                return (
                  <Table.Tr key={s.id}>
                    <Table.Td>{s.task.name}</Table.Td>
                    <Table.Td>
                      <code>{s.cron}</code> ({s.timezone})
                    </Table.Td>
                    <Table.Td>
                      <Ago iso={s.nextFireAt} />
                    </Table.Td>
                    <Table.Td>
                      {when(s.lastFiredAt)}
                      {last?.reason ? ` — ${last.reason}` : ''}
                    </Table.Td>
                    <Table.Td>
                      {s.paused ? (
                        <Badge color="orange" variant="light" title={s.pausedReason ?? undefined}>
                          Paused
                        </Badge>
                      ) : (
                        <Badge color="green" variant="light">
                          Active
                        </Badge>
                      )}
                      {s.paused && s.pausedReason && <Text size="sm">{s.pausedReason}</Text>}
                    </Table.Td>
                    <Table.Td>
                      <Group gap="xs">
                        <Button
                          size="xs"
                          variant="light"
                          aria-label={`${s.paused ? 'Resume' : 'Pause'} the schedule of ${s.task.name}`}
                          onClick={async () => {
                            await (s.paused ? resume({ schedule: s.id }) : pause({ schedule: s.id }));
                            reload();
                          }}
                        >
                          {s.paused ? 'Resume' : 'Pause'}
                        </Button>
                        <Button
                          size="xs"
                          color="red"
                          variant="light"
                          aria-label={`Delete the schedule of ${s.task.name}`}
                          onClick={async () => {
                            await removeSchedule({ schedule: s.id });
                            reload();
                          }}
                        >
                          Delete
                        </Button>
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </TableScroll>
      )}
    </Stack>
  );
}
