import { useEffect, useState } from 'react';
import { Button, Group, Stack, Table, Text } from '@mantine/core';
import { useNavigate } from 'react-router';
import { useClient, useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ToolInputFieldsFragment } from '../gql/graphql.ts';
import { Ago, Loading, QueryError, UserErrors, useConfirm } from '../components.tsx';
import { sentence, usd2, when } from '../lib/format.ts';

/** A run's Input and Log tabs, and Run again: what it was started with, what became of it, the same start anew. */

const InputQuery = graphql(`
  query ConsoleRunInput($id: ID!, $tool: Tool!) {
    run(id: $id) {
      id
      input
    }
    tool(name: $tool) {
      name
      inputFields {
        ...ToolInputFields
      }
    }
  }
`);

const LogQuery = graphql(`
  query ConsoleRunLog($id: ID!) {
    run(id: $id) {
      id
      log {
        at
        kind
        message
      }
    }
  }
`);

const RunAgainMutation = graphql(`
  mutation ConsoleStartRunAgain($id: ID!, $dryRun: Boolean) {
    startRunAgain(id: $id, dryRun: $dryRun) {
      run {
        id
      }
      estimatedCost
      userErrors {
        code
        field
        message
      }
    }
  }
`);

type Field = Pick<ToolInputFieldsFragment, 'name' | 'label' | 'kind'> & {
  fields?: readonly Pick<ToolInputFieldsFragment, 'name' | 'label' | 'kind'>[];
};

/** A REST input key (`max_items`, `searchStringsArray`) as the input type's field name. */
const camel = (name: string) => name.replace(/[_-]([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** A value of the input in words: lists joined, lists of objects one under another, yes/no, an enum value in sentence case. */
function Value({ value, field }: { value: unknown; field?: Field }) {
  if (value === null || value === undefined || value === '') return <Text c="dimmed">—</Text>;
  if (typeof value === 'boolean') return <span>{value ? 'Yes' : 'No'}</span>;
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null))
    return <span>{value.map((v) => (field?.kind === 'ENUM_LIST' ? sentence(String(v)) : String(v))).join(', ')}</span>;
  if (Array.isArray(value))
    return (
      <Stack gap="xs">
        {value.map((v, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the items of one input list, in their order
          <InputList key={i} input={v as Record<string, unknown>} fields={field?.fields ?? []} />
        ))}
      </Stack>
    );
  if (typeof value === 'object')
    return <InputList input={value as Record<string, unknown>} fields={field?.fields ?? []} />;
  return <span>{field?.kind === 'ENUM' ? sentence(String(value)) : String(value)}</span>;
}

/** An input object as a list of its fields, by their labels (the key itself when the form has none). */
function InputList({ input, fields }: { input: Record<string, unknown>; fields: readonly Field[] }) {
  return (
    <Table withRowBorders={false} verticalSpacing={4} variant="vertical" layout="fixed">
      <Table.Tbody>
        {Object.entries(input).map(([key, value]) => {
          const field = fields.find((f) => f.name === key || f.name === camel(key));
          return (
            <Table.Tr key={key}>
              <Table.Th w={220}>{field?.label ?? sentence(key)}</Table.Th>
              <Table.Td style={{ overflowWrap: 'anywhere' }}>
                <Value value={value} field={field} />
              </Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}

export function InputTab({ runId, tool }: { runId: string; tool: string }) {
  const [{ data, error }] = useQuery({ query: InputQuery, variables: { id: runId, tool: tool as never } });
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  const input = (data.run?.input ?? {}) as Record<string, unknown>;
  return (
    <section aria-label="Input">
      <Text size="sm" c="dimmed" mb="xs">
        What the run was started with, after the tool’s defaults and caps.
      </Text>
      <InputList input={input} fields={data.tool?.inputFields ?? []} />
    </section>
  );
}

export function LogTab({ runId, itemCount, status }: { runId: string; itemCount: number; status: string }) {
  // Read again as the run changes (its rows, its status).
  const [{ data, error }, reexecute] = useQuery({
    query: LogQuery,
    variables: { id: runId },
    requestPolicy: 'cache-and-network',
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: the log changes with the run's rows and status
  useEffect(() => reexecute({ requestPolicy: 'network-only' }), [itemCount, status, reexecute]);
  if (error) return <QueryError error={error} />;
  if (!data) return <Loading />;
  return (
    <Table aria-label="Run log" verticalSpacing="xs">
      <Table.Thead>
        <Table.Tr>
          <Table.Th w={180}>When</Table.Th>
          <Table.Th>What happened</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {(data.run?.log ?? []).map((entry) => (
          <Table.Tr key={`${entry.kind}-${entry.at ?? 'now'}`}>
            <Table.Td title={when(entry.at)}>{entry.at ? <Ago iso={entry.at} /> : 'Now'}</Table.Td>
            <Table.Td>{entry.message}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** Run again: the same tool with the same input, after a confirmation with what it holds; opens the new run. */
export function RunAgain({ runId, title }: { runId: string; title: string }) {
  const client = useClient();
  const navigate = useNavigate();
  const [started, start] = useMutation(RunAgainMutation);
  const [modal, ask] = useConfirm();
  const [checking, setChecking] = useState(false);
  const [refused, setRefused] = useState<readonly { message: string }[]>([]);
  const again = async () => {
    setRefused([]);
    setChecking(true);
    const quote = await client.mutation(RunAgainMutation, { id: runId, dryRun: true }).toPromise();
    setChecking(false);
    const answer = quote.data?.startRunAgain;
    if (!answer || answer.userErrors.length > 0)
      return setRefused(answer?.userErrors ?? [{ message: quote.error?.message ?? 'The run cannot start again.' }]);
    const yes = await ask({
      title: `Run ${title} again?`,
      body: `It starts with the same input and holds up to ${usd2(answer.estimatedCost)} of the wallet until it ends.`,
      confirm: 'Run again',
    });
    if (!yes) return;
    const result = await start({ id: runId });
    const run = result.data?.startRunAgain.run;
    if (run) return navigate(`/runs/${run.id}`);
    setRefused(result.data?.startRunAgain.userErrors ?? [{ message: result.error?.message ?? 'Not started.' }]);
  };
  return (
    <>
      {modal}
      <Group>
        <Button variant="default" loading={checking || started.fetching} onClick={() => void again()}>
          Run again
        </Button>
      </Group>
      {refused.length > 0 && <UserErrors errors={refused} />}
    </>
  );
}
