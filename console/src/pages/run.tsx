import { useState, type FormEvent } from 'react';
import { Alert, Button, Card, Group, Progress, Stack, Tabs, Text, Title } from '@mantine/core';
import { useNavigate, useParams } from 'react-router';
import { useClient, useMutation, useQuery, useSubscription } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ConsoleRunNextStepsQuery } from '../gql/graphql.ts';
import { DownloadButtons, FILE_FORMATS, Loading, QueryError, StatusBadge } from '../components.tsx';
import { InputTab, LogTab, RunAgain } from './run-details.tsx';
import { RowsTable } from './run-rows.tsx';
import { DeliveriesTable } from '../deliveries.tsx';
import { PageTitle } from '../Shell.tsx';
import { count, duration, usd, when } from '../lib/format.ts';
import { byField, emptyValues, type Field, FieldInput, FormError, inputOf, type Values } from '../tool-input.tsx';

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
        label
        description
        leaf
        values {
          value
          label
        }
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

const NextStepsQuery = graphql(`
  query ConsoleRunNextSteps($id: ID!) {
    run(id: $id) {
      id
      nextSteps {
        tool
        title
        column
        field
        description
        values
      }
    }
    tools {
      name
      inputFields {
        ...ToolInputFields
      }
    }
  }
`);

const RunDeliveries = graphql(`
  query ConsoleRunDeliveries($id: ID!) {
    run(id: $id) {
      id
      deliveries(first: 20) {
        nodes {
          ...DeliveryRowFields
        }
      }
    }
  }
`);

const StartNextStep = graphql(`
  mutation ConsoleStartNextStep($runId: ID!, $tool: Tool!, $column: String, $input: JSON) {
    startNextStep(runId: $runId, tool: $tool, column: $column, input: $input) {
      run {
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

function Downloads({ runId }: { runId: string }) {
  const client = useClient();
  return (
    <DownloadButtons
      formats={FILE_FORMATS}
      linkOf={async (format) => {
        const result = await client
          .query(DownloadQuery, { id: runId, format }, { requestPolicy: 'network-only' })
          .toPromise();
        return { path: result.data?.run?.downloadPath, result };
      }}
    />
  );
}

type NextStep = NonNullable<ConsoleRunNextStepsQuery['run']>['nextSteps'][number];

/**
 * One tool this run's rows can feed: its other required fields (the fed one comes from the rows), and a
 * start that opens the new run.
 */
function NextStepForm({ runId, next, fields }: { runId: string; next: NextStep; fields: readonly Field[] }) {
  const navigate = useNavigate();
  const [started, start] = useMutation(StartNextStep);
  const asked = fields.filter((f) => f.required && f.name !== next.field);
  const [values, setValues] = useState<Values>(() => emptyValues(asked));
  const [problems, setProblems] = useState<{ fields: Record<string, string>; other: string[] }>({
    fields: {},
    other: [],
  });
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    let input: Record<string, unknown>;
    try {
      input = inputOf(asked, values);
    } catch (err) {
      if (err instanceof FormError) setProblems({ fields: { [err.field]: err.message }, other: [] });
      return;
    }
    const result = await start({ runId, tool: next.tool, column: next.column, input });
    const answer = result.data?.startNextStep;
    if (answer?.run) return navigate(`/runs/${answer.run.id}`);
    if (result.error)
      return setProblems({ fields: {}, other: [result.error.graphQLErrors[0]?.message ?? result.error.message] });
    // Refusals name the field as the tool's input does (jobTitle) or under `input`; the run's own apart.
    const placed = byField(
      (answer?.userErrors ?? []).map((e) => ({ ...e, field: e.field?.[0] === 'input' ? e.field.slice(1) : e.field })),
      [],
    );
    const other = [...placed.other];
    for (const [name, message] of Object.entries(placed.fields))
      if (!asked.some((f) => f.name === name)) {
        delete placed.fields[name];
        other.push(message);
      }
    setProblems({ fields: placed.fields, other });
  };
  return (
    <form onSubmit={submit} noValidate aria-label={`Start ${next.title} from this run`}>
      <Stack gap="xs">
        <Title order={4} size="h6">
          {next.title}
        </Title>
        <Text size="sm">
          {next.description} This run’s rows give it {count(next.values)} {next.values === 1 ? 'value' : 'values'} from
          their {next.column}.
        </Text>
        {asked.map((field) => (
          <FieldInput
            key={field.name}
            field={field}
            value={values[field.name] ?? ''}
            error={problems.fields[field.name]}
            onChange={(value) => setValues((v) => ({ ...v, [field.name]: value }))}
          />
        ))}
        {problems.other.map((m) => (
          <Text key={m} c="red.9" size="sm" role="alert">
            {m}
          </Text>
        ))}
        <Group>
          <Button type="submit" variant="light" loading={started.fetching}>
            Start {next.title}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** What a finished run's rows can feed: each tool with values to work on, started from this run's rows. */
function NextSteps({ runId }: { runId: string }) {
  const [{ data }] = useQuery({ query: NextStepsQuery, variables: { id: runId }, requestPolicy: 'cache-and-network' });
  const links = data?.run?.nextSteps ?? [];
  if (links.length === 0) return null;
  const fieldsOf = new Map(data?.tools.map((t) => [t.name, t.inputFields]));
  const fed = links.filter((n) => n.values > 0);
  return (
    <Card withBorder component="section" aria-labelledby="next-steps">
      <Title order={3} size="h5" id="next-steps" mb="xs">
        Next steps
      </Title>
      {fed.length === 0 ? (
        <Text size="sm">This run’s rows have nothing another tool can work on.</Text>
      ) : (
        <Stack>
          <Text size="sm" c="dimmed">
            Start another tool on what this run found; it is an ordinary run with its own estimate and bill.
          </Text>
          {fed.map((next) => (
            <NextStepForm
              key={`${next.tool}-${next.column}`}
              runId={runId}
              next={next}
              fields={fieldsOf.get(next.tool) ?? []}
            />
          ))}
        </Stack>
      )}
    </Card>
  );
}

/**
 * Where the run's rows went: a delivery to each destination its start named, queued in the transaction
 * that ends the run (so read once it has ended), each followed live to its end. Nothing when it named none.
 */
function Deliveries({ runId, ended }: { runId: string; ended: boolean }) {
  const [{ data }] = useQuery({
    query: RunDeliveries,
    variables: { id: runId },
    requestPolicy: 'cache-and-network',
    pause: !ended,
  });
  const deliveries = data?.run?.deliveries.nodes ?? [];
  if (deliveries.length === 0) return null;
  return (
    <Card withBorder component="section" aria-labelledby="deliveries">
      <Title order={3} size="h5" id="deliveries" mb="xs">
        Deliveries
      </Title>
      <DeliveriesTable deliveries={deliveries} names="destination" />
    </Card>
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
        {run.finishedAt && (
          <Text size="sm">
            Ended {when(run.finishedAt)} (took{' '}
            {duration(new Date(run.finishedAt).getTime() - new Date(run.createdAt).getTime())})
          </Text>
        )}
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
        {tool && <RunAgain runId={run.id} title={tool.title} />}
      </Group>
      <Deliveries runId={run.id} ended={ended} />
      {ended && <NextSteps runId={run.id} />}
      {cancelState.data?.cancelRun.userErrors.map((e) => (
        <Alert key={e.code} color="red" role="alert">
          {e.message}
        </Alert>
      ))}
      <Tabs defaultValue="rows" keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="rows">Rows</Tabs.Tab>
          <Tabs.Tab value="input">Input</Tabs.Tab>
          <Tabs.Tab value="log">Log</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="rows" pt="sm">
          {tool && (
            <RowsTable runId={run.id} tool={run.tool} columns={tool.columns} ended={ended} itemCount={run.itemCount} />
          )}
        </Tabs.Panel>
        <Tabs.Panel value="input" pt="sm">
          <InputTab runId={run.id} tool={run.tool} />
        </Tabs.Panel>
        <Tabs.Panel value="log" pt="sm">
          <LogTab runId={run.id} itemCount={run.itemCount} status={run.status} />
        </Tabs.Panel>
      </Tabs>
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
