import { useEffect, useRef, useState, type FormEvent } from 'react';
import {
  Alert,
  Button,
  Card,
  Checkbox,
  Fieldset,
  Group,
  List,
  NativeSelect,
  NumberInput,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { Link, useNavigate } from 'react-router';
import { useClient, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ConsolePipelinesQuery, ConsoleQuotePipelineMutation, StartPipelineInput, Tool } from '../gql/graphql.ts';
import { Ago, Loading, Money, QueryError, StatusBadge, TableScroll } from '../components.tsx';
import { type DestinationChoice, DestinationPicker } from '../destination-picker.tsx';
import { PageTitle } from '../Shell.tsx';
import { count, usd } from '../lib/format.ts';
import { emptyValues, FieldInput, FormError, inputOf, type UserErrorLike, type Values } from '../tool-input.tsx';

const PipelinesQuery = graphql(`
  query ConsolePipelines {
    pipelines(first: 50) {
      nodes {
        id
        status
        statusMessage
        cost
        itemCount
        createdAt
        steps {
          index
          title
        }
      }
    }
    tools {
      name
      title
      available
      inputFields {
        ...ToolInputFields
      }
      feeds {
        tool
        title
        column
        field
        description
      }
    }
    destinations(first: 100) {
      nodes {
        ...DestinationChoice
      }
    }
  }
`);

const QuotePipeline = graphql(`
  mutation ConsoleQuotePipeline($input: StartPipelineInput!) {
    quotePipeline(input: $input) {
      quote {
        steps {
          tool
          mostItems
          quotedCost
        }
        estimatedCost
        uncappedCost
        walletCovers
        message
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const StartPipeline = graphql(`
  mutation ConsoleStartPipeline($input: StartPipelineInput!, $idempotencyKey: String) {
    startPipeline(input: $input, idempotencyKey: $idempotencyKey) {
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

type ToolInfo = ConsolePipelinesQuery['tools'][number];
/** A step link out of a tool: a column of its rows filling a field of the tool it feeds. */
type Feed = ToolInfo['feeds'][number];
type PipelineQuote = NonNullable<ConsoleQuotePipelineMutation['quotePipeline']['quote']>;

/** The most steps a pipeline has (StartPipelineInput.steps: 2 to 5). */
const MAX_STEPS = 5;

interface StepDraft {
  /** Stays with the step when one before it is removed. */
  key: number;
  /** The tool it runs; empty until chosen. */
  tool: string;
  /** The column of the step before that feeds it, when several can; empty for the first of them. */
  column: string;
  values: Values;
}

interface StepProblems {
  /** At the step's tool: a tool the step before cannot feed. */
  tool?: string;
  /** At the column of the step before that feeds it (shown with the tool when there is no choice of column). */
  column?: string;
  /** At the step's fields. */
  fields: Record<string, string>;
  /** The step's own, at no one field (a step that could be given more than its tool takes). */
  other: string[];
}

interface Problems {
  steps: StepProblems[];
  /** At the pipeline's options: datasetName, onlyNew, maxCostUsd, destinations. */
  options: Record<string, string>;
  other: string[];
}

const noProblems = (steps: number): Problems => ({
  steps: Array.from({ length: steps }, () => ({ fields: {}, other: [] })),
  options: {},
  other: [],
});

/** The tools `before`'s rows can feed, each once, in the order of its links. */
function followersOf(before: ToolInfo | undefined, tools: readonly ToolInfo[]): ToolInfo[] {
  const names = [...new Set(before?.feeds.map((f) => f.tool) ?? [])];
  return names.flatMap((name) => tools.filter((t) => t.name === name));
}

/** What can follow a tool, in words (its links' columns in brackets). */
function followHint(tool: ToolInfo) {
  if (tool.feeds.length === 0) return `Nothing can follow ${tool.title}.`;
  return `After ${tool.title} can come: ${tool.feeds.map((f) => `${f.title} (from ${f.column})`).join(', ')}.`;
}

/**
 * How a step is fed: the links from the tool before to its tool (more than one when several columns can
 * feed it), the one it uses, and the fields it asks for: its tool's, less the one that link fills. A first
 * step, or a tool the step before cannot feed, has no link and asks for all its fields.
 */
function feedOf(before: ToolInfo | undefined, step: StepDraft, tool: ToolInfo | undefined) {
  const links = before?.feeds.filter((f) => f.tool === step.tool) ?? [];
  const link: Feed | undefined = links.find((l) => l.column === step.column) ?? links[0];
  const shown = (tool?.inputFields ?? []).filter((f) => f.name !== link?.field);
  return { links, link, shown };
}

/** The refusals of a quote or a start, placed at the step, field or option they name. */
function placeProblems(errors: readonly UserErrorLike[], steps: number): Problems {
  const problems = noProblems(steps);
  const add = (map: Record<string, string>, key: string, message: string) => {
    map[key] = map[key] ? `${map[key]} ${message}` : message;
  };
  for (const e of errors) {
    const [root, first, index, part, name] = e.field ?? [];
    const step = first === 'steps' && index !== undefined ? problems.steps[Number(index)] : undefined;
    if (root !== 'input' || !first) problems.other.push(e.message);
    else if (step && (part === 'tool' || part === 'column'))
      step[part] = step[part] ? `${step[part]} ${e.message}` : e.message;
    else if (step && part === 'input' && name) add(step.fields, name, e.message);
    else if (step) step.other.push(e.message);
    else if (first === 'datasetName' || first === 'onlyNew' || first === 'maxCostUsd' || first === 'destinations')
      add(problems.options, first, e.message);
    else problems.other.push(e.message);
  }
  return problems;
}

interface Options {
  datasetName: string;
  onlyNew: boolean;
  maxCostUsd: string;
  /** The destinations its table is delivered to when it ends. */
  destinations: string[];
}

/**
 * The pipeline as the API takes it, from the form; or, for a value the input cannot take, the form's
 * problems with it at its field.
 */
function pipelineInput(
  steps: readonly StepDraft[],
  toolOf: (name: string) => ToolInfo | undefined,
  options: Options,
): { input: StartPipelineInput } | { problems: Problems } {
  const refused = (step: number, field: string, message: string) => {
    const placed = noProblems(steps.length);
    const at = placed.steps[step];
    if (at) at.fields[field] = message;
    else placed.options[field] = message;
    return { problems: placed };
  };
  const input: StartPipelineInput = { steps: [] };
  for (const [index, step] of steps.entries()) {
    const { links, link, shown } = feedOf(toolOf(steps[index - 1]?.tool ?? ''), step, toolOf(step.tool));
    try {
      input.steps.push({
        tool: step.tool as Tool,
        input: inputOf(shown, step.values),
        // The column is named only when there is a choice of them; the first link is the API's default.
        ...(links.length > 1 && link ? { column: link.column } : {}),
      });
    } catch (err) {
      if (err instanceof FormError) return refused(index, err.field, err.message);
      throw err;
    }
  }
  if (options.datasetName.trim()) {
    input.datasetName = options.datasetName.trim();
    input.onlyNew = options.onlyNew;
  }
  const limit = options.maxCostUsd.trim();
  if (limit) {
    // Money: a decimal string of US dollars, at most six decimals.
    if (!/^\d+(\.\d{1,6})?$/.test(limit))
      return refused(-1, 'maxCostUsd', 'Enter an amount in US dollars, e.g. 5 or 2.50.');
    input.maxCostUsd = limit;
  }
  if (options.destinations.length > 0) input.destinations = options.destinations;
  return { input };
}

/** A key for one start: a retry of it answers the first (it needs no secure context, unlike randomUUID). */
const newIdempotencyKey = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

/** The quote in words: each step’s upper bound, what a start holds, whether the wallet covers it. */
function QuoteText({ quote, titleOf }: { quote: PipelineQuote; titleOf: (tool: string) => string }) {
  return (
    <Card withBorder>
      <Title order={3} size="h5" mb="xs">
        Quote
      </Title>
      <List size="sm" mb="xs">
        {quote.steps.map((s, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: one quote's steps, in order, replaced as a whole
          <List.Item key={i}>
            Step {i + 1}, {titleOf(s.tool)}: up to {count(s.mostItems)} {i === 0 ? 'results asked for' : 'inputs'}, at
            most {usd(s.quotedCost)}
          </List.Item>
        ))}
      </List>
      <Text size="sm">
        Held at the start: <strong>{usd(quote.estimatedCost)}</strong>
        {quote.uncappedCost ? ` of ${usd(quote.uncappedCost)} the steps could cost` : ''}.{' '}
        {quote.walletCovers ? 'The wallet covers it.' : 'The wallet does not cover it all.'}
      </Text>
      <Text size="sm" c="dimmed">
        {quote.message}
      </Text>
    </Card>
  );
}

/** Problems sized to the form's steps: an answer about fewer steps (those with a tool) padded, none dropped. */
const fitted = (problems: Problems, steps: number): Problems => ({
  ...problems,
  steps: Array.from({ length: steps }, (_, i) => problems.steps[i] ?? { fields: {}, other: [] }),
});

function NewPipeline({
  tools,
  destinations,
}: {
  tools: readonly ToolInfo[];
  destinations: readonly DestinationChoice[];
}) {
  const client = useClient();
  const navigate = useNavigate();
  const [steps, setSteps] = useState<StepDraft[]>([{ key: 0, tool: '', column: '', values: {} }]);
  const [options, setOptions] = useState<Options>({
    datasetName: '',
    onlyNew: true,
    maxCostUsd: '',
    destinations: [],
  });
  const [problems, setProblems] = useState<Problems>(noProblems(1));
  const [quote, setQuote] = useState<PipelineQuote | null>(null);
  const [busy, setBusy] = useState(false);
  const nextKey = useRef(1);
  const latest = useRef(0);
  const toolOf = (name: string) => tools.find((t) => t.name === name);
  const titleOf = (name: string) => toolOf(name)?.title ?? name;
  const lastTool = toolOf(steps.at(-1)?.tool ?? '');

  // The quote follows the form: a moment after the last change, the pipeline is quoted with every check
  // its start makes. While the last step has no tool yet, the steps before it are checked, unquoted.
  // biome-ignore lint/correctness/useExhaustiveDependencies: remade on the form's changes only; `tools` is the page's, loaded once
  useEffect(() => {
    const call = ++latest.current;
    if (!steps[0]?.tool) {
      setQuote(null);
      setProblems(noProblems(steps.length));
      return;
    }
    const timer = setTimeout(async () => {
      const sent = steps.at(-1)?.tool ? steps : steps.slice(0, -1);
      const quoting = sent.length === steps.length && steps.length >= 2;
      const built = pipelineInput(sent, toolOf, options);
      if ('problems' in built) {
        setQuote(null);
        return setProblems(fitted(built.problems, steps.length));
      }
      // One step is no pipeline: the API is asked once there are two.
      if (sent.length < 2) {
        setQuote(null);
        return setProblems(noProblems(steps.length));
      }
      const result = await client
        .mutation(QuotePipeline, { input: built.input }, { requestPolicy: 'network-only' })
        .toPromise();
      if (call !== latest.current) return;
      // The quote shown is the newest answer's: until it comes, the one before stays.
      setQuote(quoting ? (result.data?.quotePipeline.quote ?? null) : null);
      if (result.error)
        return setProblems({
          ...noProblems(steps.length),
          other: [result.error.graphQLErrors[0]?.message ?? result.error.message],
        });
      const answer = result.data?.quotePipeline;
      if (answer) setProblems(fitted(placeProblems(answer.userErrors, sent.length), steps.length));
    }, 300);
    return () => clearTimeout(timer);
  }, [steps, options, client]);

  const update = (index: number, change: (step: StepDraft) => StepDraft) =>
    setSteps((all) => all.map((s, i) => (i === index ? change(s) : s)));

  const addStep = () => setSteps((all) => [...all, { key: nextKey.current++, tool: '', column: '', values: {} }]);
  const removeStep = (index: number) => setSteps((all) => all.filter((_, i) => i !== index));

  const start = async (event: FormEvent) => {
    event.preventDefault();
    latest.current++;
    const built = pipelineInput(steps, toolOf, options);
    if ('problems' in built) return setProblems(built.problems);
    setBusy(true);
    try {
      const result = await client
        .mutation(
          StartPipeline,
          { input: built.input, idempotencyKey: newIdempotencyKey() },
          { requestPolicy: 'network-only' },
        )
        .toPromise();
      if (result.error)
        return setProblems({
          ...noProblems(steps.length),
          other: [result.error.graphQLErrors[0]?.message ?? result.error.message],
        });
      const answer = result.data?.startPipeline;
      if (answer?.pipeline) return navigate(`/pipelines/${answer.pipeline.id}`);
      if (answer) setProblems(placeProblems(answer.userErrors, steps.length));
    } finally {
      setBusy(false);
    }
  };

  const stepProblems = (index: number) => problems.steps[index] ?? { fields: {}, other: [] };
  const canAdd = steps.length < MAX_STEPS && (lastTool?.feeds.length ?? 0) > 0;
  const ready = steps.length >= 2 && steps.every((s) => s.tool);

  return (
    <form onSubmit={start} noValidate aria-label="New pipeline">
      <Card withBorder>
        <Stack maw={720}>
          <Title order={3} size="h4">
            New pipeline
          </Title>
          <Text size="sm" c="dimmed">
            The first step is a tool with its input; each step after it is fed by the rows of the step before. The whole
            pipeline is quoted as you build it, and its quote is held when it starts.
          </Text>
          {steps.map((step, index) => {
            const tool = toolOf(step.tool);
            const mine = stepProblems(index);
            const before = index > 0 ? toolOf(steps[index - 1]?.tool ?? '') : undefined;
            const offered = index === 0 ? tools : followersOf(before, tools);
            // A tool the step before no longer feeds stays chosen, with the API's refusal at it.
            const choices = tool && !offered.includes(tool) ? [tool, ...offered] : offered;
            const { links, link, shown } = feedOf(before, step, tool);
            // A refusal at a field the step does not ask for (the one fed) is shown with the step's own.
            const elsewhere = Object.entries(mine.fields)
              .filter(([name]) => !shown.some((f) => f.name === name))
              .map(([, message]) => message);
            const toolError = [mine.tool, links.length > 1 ? undefined : mine.column].filter(Boolean).join(' ');
            return (
              <Fieldset key={step.key} legend={`Step ${index + 1}`}>
                <Stack gap="sm">
                  <NativeSelect
                    label="Tool"
                    value={step.tool}
                    error={toolError || undefined}
                    onChange={(e) => {
                      const name = e.currentTarget.value;
                      update(index, (s) => ({
                        ...s,
                        tool: name,
                        column: '',
                        values: emptyValues(toolOf(name)?.inputFields ?? []),
                      }));
                    }}
                    data={[
                      ...(step.tool ? [] : [{ value: '', label: 'Choose a tool' }]),
                      ...choices.map((t) => ({
                        value: t.name,
                        label: t.available ? t.title : `${t.title} (needs a higher plan)`,
                        disabled: !t.available,
                      })),
                    ]}
                  />
                  {links.length > 1 && (
                    <NativeSelect
                      label={`Column of step ${index}`}
                      description={`The column of step ${index}’s rows that feeds this step.`}
                      value={link?.column ?? ''}
                      error={mine.column}
                      onChange={(e) => {
                        const column = e.currentTarget.value;
                        update(index, (s) => ({ ...s, column }));
                      }}
                      data={links.map((l) => ({ value: l.column, label: l.column }))}
                    />
                  )}
                  {before && tool && link && (
                    <Text size="sm" c="dimmed">
                      Fed by the rows of step {index}: their {link.column} fills its {link.field}. {link.description}
                    </Text>
                  )}
                  {shown.map((field) => (
                    <FieldInput
                      key={field.name}
                      field={field}
                      value={step.values[field.name] ?? ''}
                      error={mine.fields[field.name]}
                      onChange={(value) =>
                        update(index, (s) => ({ ...s, values: { ...s.values, [field.name]: value } }))
                      }
                    />
                  ))}
                  {[...elsewhere, ...mine.other].map((m) => (
                    <Text key={m} c="red.9" size="sm" role="alert">
                      {m}
                    </Text>
                  ))}
                  {index > 0 && (
                    <Group>
                      <Button
                        size="xs"
                        variant="subtle"
                        color="red"
                        aria-label={`Remove step ${index + 1}`}
                        onClick={() => removeStep(index)}
                      >
                        Remove step
                      </Button>
                    </Group>
                  )}
                </Stack>
              </Fieldset>
            );
          })}
          <Group>
            <Button variant="light" onClick={addStep} disabled={!canAdd}>
              Add step
            </Button>
            {lastTool && steps.length < MAX_STEPS && (
              <Text size="sm" c="dimmed">
                {followHint(lastTool)}
              </Text>
            )}
          </Group>
          <Group align="flex-start">
            <TextInput
              label="Dataset (optional)"
              description="The dataset the first step adds its rows to."
              value={options.datasetName}
              onChange={(e) => setOptions((o) => ({ ...o, datasetName: e.currentTarget.value }))}
              error={problems.options.datasetName}
            />
            <Checkbox
              mt="xl"
              label="Only rows not delivered before"
              checked={options.onlyNew}
              disabled={!options.datasetName.trim()}
              onChange={(e) => setOptions((o) => ({ ...o, onlyNew: e.currentTarget.checked }))}
              error={problems.options.onlyNew}
            />
            <NumberInput
              label="Cost limit in USD (optional)"
              description="Not started when quoted over it."
              value={options.maxCostUsd}
              min={0}
              onChange={(v) => setOptions((o) => ({ ...o, maxCostUsd: String(v) }))}
              error={problems.options.maxCostUsd}
            />
          </Group>
          <DestinationPicker
            of="pipeline"
            destinations={destinations}
            value={options.destinations}
            error={problems.options.destinations}
            onChange={(chosen) => setOptions((o) => ({ ...o, destinations: chosen }))}
          />
          {problems.other.length > 0 && (
            <Alert color="red" role="alert" title="Not started">
              {problems.other.map((m, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: the messages of one answer, replaced as a whole and never reordered
                <div key={i}>{m}</div>
              ))}
            </Alert>
          )}
          <div role="status" aria-live="polite" aria-label="Quote">
            {quote ? (
              <QuoteText quote={quote} titleOf={titleOf} />
            ) : (
              !ready && (
                <Text size="sm" c="dimmed">
                  Choose a tool for every step, two at least, to see the quote.
                </Text>
              )
            )}
          </div>
          <Group>
            <Button type="submit" loading={busy} disabled={!ready}>
              Start
            </Button>
          </Group>
        </Stack>
      </Card>
    </form>
  );
}

export default function Pipelines() {
  const [{ data, error }] = useQuery({ query: PipelinesQuery, requestPolicy: 'cache-and-network' });
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const pipelines = data.pipelines.nodes;
  return (
    <Stack>
      <PageTitle title="Pipelines">
        A pipeline runs tools one after another, each fed by the rows of the one before: places, then the contacts at
        their websites, then whether their email addresses work. It is quoted before it starts and held as one amount;
        each step is a run you can open, and what is left of the hold comes back at the end.
      </PageTitle>
      <Title order={2} size="h4">
        Pipelines
      </Title>
      {pipelines.length === 0 ? (
        <Text c="dimmed">No pipelines yet.</Text>
      ) : (
        <TableScroll label="Pipelines" minWidth={720}>
          <Table aria-label="Pipelines" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Pipeline</Table.Th>
                <Table.Th>Steps</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Rows</Table.Th>
                <Table.Th>Cost</Table.Th>
                <Table.Th>Started</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {pipelines.map((p) => (
                <Table.Tr key={p.id}>
                  <Table.Td>
                    <Link to={`/pipelines/${p.id}`}>{p.id}</Link>
                  </Table.Td>
                  <Table.Td>{p.steps.map((s) => s.title).join(' → ')}</Table.Td>
                  <Table.Td>
                    <StatusBadge status={p.status} />
                    <Text size="sm">{p.statusMessage}</Text>
                  </Table.Td>
                  <Table.Td>{count(p.itemCount)}</Table.Td>
                  <Table.Td>
                    <Money amount={p.cost} />
                  </Table.Td>
                  <Table.Td>
                    <Ago iso={p.createdAt} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableScroll>
      )}
      <NewPipeline tools={data.tools} destinations={data.destinations.nodes} />
    </Stack>
  );
}
