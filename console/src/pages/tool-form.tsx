import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { Alert, Anchor, Button, Checkbox, Group, Stack, Text, TextInput } from '@mantine/core';
import { Link, useNavigate, useParams } from 'react-router';
import { useClient, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ConsoleToolQuery } from '../gql/graphql.ts';
import { Loading, QueryError } from '../components.tsx';
import { type DestinationChoice, DestinationPicker } from '../destination-picker.tsx';
import { PageTitle } from '../Shell.tsx';
import { count, toolValue, usd } from '../lib/format.ts';
import { byField, emptyValues, FieldInput, FormError, inputOf, type Values } from '../tool-input.tsx';

const ToolQuery = graphql(`
  query ConsoleTool($name: Tool!) {
    tool(name: $name) {
      name
      title
      description
      priceText
      priceUnit
      available
      plan
      permissibleUse
      mutation
      inputType
      inputFields {
        ...ToolInputFields
      }
    }
    destinations(first: 100) {
      nodes {
        ...DestinationChoice
      }
    }
    permissibleUse {
      notice
      acknowledged
    }
  }
`);

const AcknowledgePermissibleUse = graphql(`
  mutation ConsoleAcknowledgePermissibleUse {
    acknowledgePermissibleUse {
      permissibleUse {
        acknowledged
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

type Tool = NonNullable<ConsoleToolQuery['tool']>;

interface StartAnswer {
  run: { id: string } | null;
  message: string | null;
  estimatedCost: string | null;
  uncappedCost: string | null;
  walletCovers: boolean | null;
  coveredUnits: number | null;
  userErrors: { code: string; field: string[] | null; message: string }[];
}

/** A dry run's answer as the form quotes it. */
type Quote = Pick<StartAnswer, 'estimatedCost' | 'uncappedCost' | 'walletCovers' | 'coveredUnits'>;

/**
 * A refusal of GraphQL itself (a value its input type does not take), at the field it names, in words:
 * `Variable "$input" got invalid value …; Field "url" of required type "String!" was not provided.`
 */
export function graphQLRefusal(message: string, fields: readonly { name: string; label: string }[]) {
  const named = /Field "(\w+)" of required type/.exec(message) ?? /at "input\.(\w+)"/.exec(message);
  const field = fields.find((f) => f.name === named?.[1]);
  if (!field) return { fields: {}, other: ['The form could not be sent as it is; check the fields above.'] };
  return {
    fields: {
      [field.name]: /was not provided/.test(message) ? `Enter the ${field.label.toLowerCase()}.` : 'Check this value.',
    },
    other: [],
  };
}

/**
 * The start mutation of a tool, built from what the `tool` query names: every start mutation takes
 * the same arguments and answers the same fields, so one document shape serves them all.
 */
const startDocument = (
  tool: Tool,
) => `mutation ConsoleStart($input: ${tool.inputType}!, $dryRun: Boolean, $destinations: [ID!]) {
  start: ${tool.mutation}(input: $input, dryRun: $dryRun, destinations: $destinations) {
    run { id } message estimatedCost uncappedCost walletCovers coveredUnits userErrors { code field message }
  }
}`;

/** The refusals at the start's `destinations`, apart from those of its input. */
const atDestinations = (errors: readonly { field: string[] | null; message: string }[]) =>
  errors.filter((e) => e.field?.[0] === 'destinations');

const SaveTask = graphql(`
  mutation ConsoleSaveTask($input: CreateTaskInput!) {
    createTask(input: $input) {
      task {
        id
        name
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

type PermissibleUse = NonNullable<ConsoleToolQuery['permissibleUse']>;

function StartForm({
  tool,
  destinations,
  permissibleUse,
}: {
  tool: Tool;
  destinations: readonly DestinationChoice[];
  permissibleUse: PermissibleUse;
}) {
  const client = useClient();
  const navigate = useNavigate();
  const [values, setValues] = useState<Values>(() => emptyValues(tool.inputFields));
  const [estimate, setEstimate] = useState<Quote | null>(null);
  // Refusals show once the user has pressed Start; until then the form is quiet and only quotes.
  const [submitted, setSubmitted] = useState(false);
  const [errors, setErrors] = useState<{ fields: Record<string, string>; other: string[] }>({ fields: {}, other: [] });
  const [chosen, setChosen] = useState<string[]>([]);
  const [destinationsError, setDestinationsError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  // The tools about individuals: the account acknowledges their permissible use once, here or elsewhere.
  const mustAcknowledge = tool.permissibleUse && !permissibleUse.acknowledged;
  const [agreed, setAgreed] = useState(false);
  const [agreeError, setAgreeError] = useState<string | undefined>();
  const document = useMemo(() => startDocument(tool), [tool]);
  const latest = useRef(0);

  const send = useCallback(
    async (dryRun: boolean): Promise<StartAnswer | undefined> => {
      // A dry run speaks only after a Start: before it, an incomplete form is no failure.
      const speak = !dryRun || submitted;
      let input: Record<string, unknown>;
      try {
        input = inputOf(tool.inputFields, values);
      } catch (err) {
        if (err instanceof FormError && speak) setErrors({ fields: { [err.field]: err.message }, other: [] });
        return undefined;
      }
      const result = await client
        .mutation<{ start: StartAnswer }>(
          document,
          { input, dryRun, destinations: chosen.length > 0 ? chosen : null },
          { requestPolicy: 'network-only' },
        )
        .toPromise();
      if (result.error) {
        const refusal = result.error.graphQLErrors[0];
        if (speak)
          setErrors(
            refusal?.extensions?.code === 'BAD_USER_INPUT'
              ? graphQLRefusal(refusal.message, tool.inputFields)
              : { fields: {}, other: [refusal?.message ?? result.error.message] },
          );
        return undefined;
      }
      const answer = result.data?.start;
      if (answer && speak) {
        const mine = atDestinations(answer.userErrors);
        setDestinationsError(mine.map((e) => e.message).join(' ') || undefined);
        setErrors(byField(answer.userErrors.filter((e) => !mine.includes(e))));
      }
      return answer;
    },
    [tool.inputFields, values, client, document, chosen, submitted],
  );

  // The estimate follows the form: a dry run of the start a moment after the last change.
  useEffect(() => {
    const call = ++latest.current;
    const timer = setTimeout(async () => {
      const answer = await send(true);
      if (call !== latest.current) return;
      setEstimate(answer && answer.userErrors.length === 0 ? answer : null);
    }, 300);
    return () => clearTimeout(timer);
    // `send` is remade when the values change.
  }, [send]);

  const start = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (mustAcknowledge) {
      if (!agreed) return setAgreeError('Tick this to confirm, then start.');
      const acknowledged = await client.mutation(AcknowledgePermissibleUse, {}).toPromise();
      const refused =
        acknowledged.error?.message ?? acknowledged.data?.acknowledgePermissibleUse.userErrors[0]?.message;
      if (refused) return setAgreeError(refused);
    }
    setBusy(true);
    latest.current++;
    try {
      const answer = await send(false);
      if (answer?.run) navigate(`/runs/${answer.run.id}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={start} noValidate aria-label={`Start ${tool.title}`}>
      <Stack maw={720}>
        {tool.inputFields.map((field) => (
          <FieldInput
            key={field.name}
            field={field}
            value={values[field.name] ?? ''}
            error={errors.fields[field.name]}
            onChange={(value) => setValues((v) => ({ ...v, [field.name]: value }))}
          />
        ))}
        {errors.other.length > 0 && (
          <Alert color="red" role="alert" title="Not started">
            {errors.other.map((m, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the messages of one answer, replaced as a whole and never reordered
              <div key={i}>{m}</div>
            ))}
          </Alert>
        )}
        {mustAcknowledge && (
          <Alert color="yellow" title="Permissible use">
            <Stack gap="xs">
              <Text size="sm">{permissibleUse.notice}</Text>
              <Checkbox
                label="I will not use these results for employment, tenant screening or any other regulated purpose"
                checked={agreed}
                error={agreeError}
                onChange={(e) => {
                  setAgreed(e.currentTarget.checked);
                  setAgreeError(undefined);
                }}
              />
            </Stack>
          </Alert>
        )}
        <DestinationPicker destinations={destinations} value={chosen} error={destinationsError} onChange={setChosen} />
        <div role="status" aria-live="polite" aria-label="Quote">
          {estimate ? (
            <QuoteText quote={estimate} unit={tool.priceUnit} />
          ) : (
            <Text size="sm" c="dimmed">
              Fill in the fields to see the price.
            </Text>
          )}
        </div>
        <Group>
          <Button type="submit" loading={busy}>
            Start
          </Button>
        </Group>
        <SaveAsTask
          tool={tool}
          inputOfForm={() => inputOf(tool.inputFields, values)}
          destinations={chosen}
          onFieldError={setErrors}
        />
      </Stack>
    </form>
  );
}

const plural = (n: number, unit: string) => `${count(n)} ${n === 1 ? unit : `${unit}s`}`;

/**
 * The quote of a dry run in plain words: the list price of everything asked, what the wallet covers,
 * and, when it does not cover it all, what happens when the money runs out.
 */
function QuoteText({ quote, unit }: { quote: Quote; unit: string }) {
  const listPrice = quote.uncappedCost ?? quote.estimatedCost;
  if (quote.walletCovers !== false)
    return (
      <Text>
        List price: <strong>{usd(listPrice)}</strong> at most. Your wallet covers it; you pay only for the {unit}s
        delivered and the rest of the hold is released.
      </Text>
    );
  return (
    <Alert color="orange" title="Your wallet does not cover this request">
      List price: <strong>{usd(listPrice)}</strong>. Your wallet covers {usd(quote.estimatedCost)}, about{' '}
      {plural(quote.coveredUnits ?? 0, unit)}. The run stops when that is spent and keeps (and bills) the {unit}s found
      until then.{' '}
      <Anchor component={Link} to="/billing">
        Add credits on Billing
      </Anchor>{' '}
      to get everything.
    </Alert>
  );
}

/**
 * Saves the form's input as a task, to run by hand or on a schedule; with a dataset, its runs add their
 * rows to it (and, with “only new”, deliver only rows it has not delivered before).
 */
function SaveAsTask({
  tool,
  inputOfForm,
  destinations,
  onFieldError,
}: {
  tool: Tool;
  inputOfForm: () => Record<string, unknown>;
  /** The destinations picked above: each start of the task delivers its rows to them. */
  destinations: string[];
  onFieldError: (errors: { fields: Record<string, string>; other: string[] }) => void;
}) {
  const client = useClient();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [dataset, setDataset] = useState('');
  const [onlyNew, setOnlyNew] = useState(true);
  const [problems, setProblems] = useState<{ field: string[] | null; message: string }[]>([]);
  const save = async () => {
    let input: Record<string, unknown>;
    try {
      input = inputOfForm();
    } catch (err) {
      if (err instanceof FormError) onFieldError({ fields: { [err.field]: err.message }, other: [] });
      return;
    }
    const result = await client
      .mutation(SaveTask, {
        input: {
          name,
          tool: tool.name,
          input,
          ...(dataset ? { datasetName: dataset, onlyNew } : {}),
          ...(destinations.length > 0 ? { destinations } : {}),
        },
      })
      .toPromise();
    const answer = result.data?.createTask;
    const errors = answer?.userErrors ?? [];
    // Refusals of the input show at the form's fields; the task's own at its fields here.
    onFieldError(
      byField(errors.filter((e) => e.field?.[1] === 'input').map((e) => ({ ...e, field: e.field?.slice(1) ?? null }))),
    );
    setProblems(errors.filter((e) => e.field?.[1] !== 'input'));
    if (answer?.task) navigate('/schedules');
  };
  const problemAt = (field: string) => problems.find((p) => p.field?.at(-1) === field)?.message;
  return (
    <Stack gap="xs" mt="md" aria-label="Save as a task" role="group">
      <Text fw={600}>Save as a task</Text>
      <Text size="sm" c="dimmed">
        Keep this input under a name, to run it again or on a schedule. Name a dataset to collect its rows across runs.
        Its runs deliver their rows to the destinations picked above.
      </Text>
      <Group align="flex-end">
        <TextInput
          label="Task name"
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={problemAt('name')}
        />
        <TextInput
          label="Dataset (optional)"
          value={dataset}
          onChange={(e) => setDataset(e.currentTarget.value)}
          error={problemAt('datasetName')}
        />
        <Checkbox
          label="Only rows not delivered before"
          checked={onlyNew}
          disabled={!dataset}
          onChange={(e) => setOnlyNew(e.currentTarget.checked)}
        />
        <Button variant="light" onClick={save}>
          Save as task
        </Button>
      </Group>
      {problems
        .filter((p) => !p.field || !['name', 'datasetName'].includes(p.field.at(-1) ?? ''))
        .map((p) => (
          <Text key={p.message} c="red" role="alert">
            {p.message}
          </Text>
        ))}
    </Stack>
  );
}

export default function ToolForm() {
  const { tool: slug = '' } = useParams();
  const [{ data, error }] = useQuery({ query: ToolQuery, variables: { name: toolValue(slug) as never } });
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const tool = data.tool;
  if (!tool) return <Alert color="red">No such tool.</Alert>;
  return (
    <Stack>
      <PageTitle title={tool.title}>{tool.description}</PageTitle>
      <Text fw={600}>Price: {tool.priceText}</Text>
      {tool.available ? (
        <StartForm
          key={tool.name}
          tool={tool}
          destinations={data.destinations.nodes}
          permissibleUse={data.permissibleUse}
        />
      ) : (
        <Alert color="yellow">This tool needs the {tool.plan?.toLowerCase()} plan or higher.</Alert>
      )}
    </Stack>
  );
}
