import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { Alert, Button, Card, Checkbox, Code, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { WebhookEvent } from '../gql/graphql.ts';
import { Ago, Loading, QueryError, TableScroll, useConfirm, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { when } from '../lib/format.ts';

const WebhooksQuery = graphql(`
  query ConsoleWebhooks {
    webhooks(first: 20) {
      nodes {
        id
        url
        events
        description
        createdAt
        deliveries(first: 10) {
          nodes {
            id
            event
            runId
            status
            attempts
            responseStatus
            lastError
            createdAt
            lastAttemptAt
          }
        }
      }
    }
  }
`);

const CreateWebhook = graphql(`
  mutation ConsoleCreateWebhook($input: CreateWebhookInput!) {
    createWebhook(input: $input) {
      webhook {
        id
        url
      }
      secret
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const DeleteWebhook = graphql(`
  mutation ConsoleDeleteWebhook($id: ID!) {
    deleteWebhook(id: $id) {
      deletedWebhookId
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const SendTestWebhook = graphql(`
  mutation ConsoleSendTestWebhook($id: ID!) {
    sendTestWebhook(id: $id) {
      delivery {
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

const EVENTS: { value: WebhookEvent; label: string }[] = [
  { value: 'RUN_SUCCEEDED', label: 'Run succeeded' },
  { value: 'RUN_FAILED', label: 'Run failed' },
  { value: 'RUN_ABORTED', label: 'Run aborted' },
  { value: 'RUN_TIMED_OUT', label: 'Run timed out' },
  { value: 'SCHEDULE_PAUSED', label: 'Schedule paused' },
];

export default function Webhooks() {
  const [confirmation, ask] = useConfirm();
  const [{ data, error }, refetch] = useQuery({ query: WebhooksQuery, requestPolicy: 'cache-and-network' });
  const [created, create] = useMutation(CreateWebhook);
  const [deleted, remove] = useMutation(DeleteWebhook);
  const [tested, sendTest] = useMutation(SendTestWebhook);
  const [testedHook, setTestedHook] = useState<string | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<WebhookEvent[]>(EVENTS.map((e) => e.value));
  const reload = useCallback(() => refetch({ requestPolicy: 'network-only' }), [refetch]);
  const answer = created.data?.createWebhook;
  const testId = tested.data?.sendTestWebhook.delivery?.id;
  // The log refreshes until the receiver's first answer to the test event is in it.
  const awaitingTest = Boolean(
    testId && data?.webhooks.nodes.some((h) => h.deliveries.nodes.some((d) => d.id === testId && d.attempts === 0)),
  );
  useEffect(() => {
    if (!awaitingTest) return;
    const timer = setInterval(reload, 1000);
    return () => clearInterval(timer);
  }, [awaitingTest, reload]);
  const fieldError = (field: string) => answer?.userErrors.find((e) => e.field?.at(-1) === field)?.message;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await create({ input: { url, events, ...(description ? { description } : {}) } });
    if (result.data?.createWebhook.webhook) {
      setUrl('');
      setDescription('');
      reload();
    }
  };
  return (
    <Stack>
      {confirmation}
      <PageTitle title="Webhooks">
        The gateway POSTs how each run ended to these URLs, signed (Standard Webhooks) with the webhook’s secret, and
        retries for about a day.
      </PageTitle>
      <form onSubmit={submit} aria-label="Create a webhook">
        <Stack maw={640}>
          <TextInput
            label="URL"
            type="url"
            required
            value={url}
            onChange={(e) => setUrl(e.currentTarget.value)}
            error={fieldError('url')}
          />
          <TextInput
            label="Description"
            value={description}
            onChange={(e) => setDescription(e.currentTarget.value)}
            error={fieldError('description')}
          />
          <Checkbox.Group label="Events" value={events} onChange={(v) => setEvents(v as WebhookEvent[])}>
            <Group mt="xs">
              {EVENTS.map((e) => (
                <Checkbox key={e.value} value={e.value} label={e.label} />
              ))}
            </Group>
          </Checkbox.Group>
          <Group>
            <Button type="submit" loading={created.fetching}>
              Create webhook
            </Button>
          </Group>
        </Stack>
      </form>
      <UserErrors
        errors={(answer?.userErrors ?? []).filter((e) => !['url', 'description'].includes(e.field?.at(-1) ?? ''))}
      />
      {answer?.secret && (
        <Alert color="green" role="status" title="Webhook created">
          <Text size="sm">Its signing secret, shown only this once:</Text>
          <Code data-testid="webhook-secret">{answer.secret}</Code>
        </Alert>
      )}
      <UserErrors
        errors={[...(deleted.data?.deleteWebhook.userErrors ?? []), ...(tested.data?.sendTestWebhook.userErrors ?? [])]}
      />
      {error ? (
        <QueryError error={error} />
      ) : !data ? (
        <Loading />
      ) : (
        data.webhooks.nodes.map((hook) => (
          <Card key={hook.id} withBorder component="section" aria-label={`Webhook ${hook.url}`}>
            <Group justify="space-between">
              <div>
                <Title order={3} size="h5">
                  {hook.url}
                </Title>
                <Text size="sm">
                  {hook.description ?? ''} · {hook.events.join(', ')} · since {when(hook.createdAt)}
                </Text>
              </div>
              <Group gap="xs">
                <Button
                  size="xs"
                  variant="outline"
                  aria-label={`Send a test event to ${hook.url}`}
                  loading={tested.fetching && testedHook === hook.id}
                  onClick={async () => {
                    setTestedHook(hook.id);
                    await sendTest({ id: hook.id });
                    reload();
                  }}
                >
                  Send test event
                </Button>
                <Button
                  size="xs"
                  color="red"
                  variant="outline"
                  aria-label={`Delete the webhook ${hook.url}`}
                  onClick={async () => {
                    if (
                      !(await ask({
                        title: `Delete the webhook ${hook.url}?`,
                        body: 'Its delivery log is deleted with it.',
                        confirm: 'Delete',
                        color: 'red',
                      }))
                    )
                      return;
                    await remove({ id: hook.id });
                    reload();
                  }}
                >
                  Delete
                </Button>
              </Group>
            </Group>
            {testId && testedHook === hook.id && (
              <Alert mt="sm" color="green" role="status">
                Test event {testId} queued; the receiver’s answer shows in the log below.
              </Alert>
            )}
            <TableScroll label={`Deliveries to ${hook.url}`} minWidth={720}>
              <Table
                mt="sm"
                aria-label={`Deliveries to ${hook.url}`}
                data={{
                  head: ['When', 'Event', 'Run', 'Status', 'Attempts', 'Answer'],
                  body: hook.deliveries.nodes.map((d) => [
                    <Ago key="createdAt" iso={d.createdAt} />,
                    d.event,
                    d.runId ?? '—',
                    d.status,
                    d.attempts,
                    d.responseStatus ?? d.lastError ?? '—',
                  ]),
                }}
              />
            </TableScroll>
          </Card>
        ))
      )}
    </Stack>
  );
}
