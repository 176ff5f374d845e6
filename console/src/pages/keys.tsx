import { useState, type FormEvent } from 'react';
import { Alert, Button, Code, CopyButton, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ConsoleKeysQuery } from '../gql/graphql.ts';
import { Ago, Loading, QueryError, TableScroll, useConfirm, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { when } from '../lib/format.ts';
import { ConnectedApps } from './connected-apps.tsx';

const KeysQuery = graphql(`
  query ConsoleKeys {
    viewer {
      id
      apiKeys(first: 100, includeRevoked: true) {
        nodes {
          id
          name
          prefix
          createdBy {
            id
            email
            name
          }
          actsAs
          createdAt
          lastUsedAt
          expiresAt
          revokedAt
          revokedReason
        }
      }
    }
  }
`);

const CreateKey = graphql(`
  mutation ConsoleCreateKey($input: CreateApiKeyInput!) {
    createApiKey(input: $input) {
      apiKey {
        id
        name
        prefix
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

const RevokeKey = graphql(`
  mutation ConsoleRevokeKey($id: ID!) {
    revokeApiKey(id: $id) {
      apiKey {
        id
        revokedAt
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

/** The new key's secret, shown once: cleared from the screen when that key is revoked. */
interface NewKey {
  id: string;
  name: string;
  value: string;
}

/** A first request with the new key, to paste in a terminal: the wallet, which every key may read. */
const quickStart = (secret: string) =>
  `curl -H "Authorization: Bearer ${secret}" ${window.location.origin}/api/v1/wallet`;

function CreateKeyForm({
  onCreated,
  secret,
  setSecret,
}: {
  onCreated(): void;
  secret: NewKey | null;
  setSecret(key: NewKey | null): void;
}) {
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [created, create] = useMutation(CreateKey);
  const answer = created.data?.createApiKey;
  const fieldError = (field: string) => answer?.userErrors.find((e) => e.field?.at(-1) === field)?.message;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSecret(null);
    const result = await create({
      input: { name, ...(expires ? { expiresAt: new Date(`${expires}T23:59:59Z`).toISOString() } : {}) },
    });
    const made = result.data?.createApiKey;
    if (made?.secret && made.apiKey) {
      setSecret({ id: made.apiKey.id, name: made.apiKey.name, value: made.secret });
      setName('');
      setExpires('');
      onCreated();
    }
  };
  return (
    <Stack>
      <form onSubmit={submit} aria-label="Create an API key">
        <Group align="flex-end">
          <TextInput
            label="Key name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={fieldError('name')}
          />
          <TextInput
            label="Expires on (optional)"
            type="date"
            value={expires}
            onChange={(e) => setExpires(e.currentTarget.value)}
            error={fieldError('expiresAt')}
          />
          <Button type="submit" loading={created.fetching}>
            Create key
          </Button>
        </Group>
      </form>
      {answer && (
        <UserErrors errors={answer.userErrors.filter((e) => !['name', 'expiresAt'].includes(e.field?.at(-1) ?? ''))} />
      )}
      {created.error && (
        <Alert color="red" role="alert">
          {created.error.message}
        </Alert>
      )}
      {secret && (
        <Alert color="green" title={`Key “${secret.name}” created`} role="status">
          <Text size="sm" mb="xs">
            Copy it now: the secret is shown only this once.
          </Text>
          <Group>
            <Text size="sm" fw={600}>
              Secret
            </Text>
            <Code data-testid="new-key-secret">{secret.value}</Code>
            <CopyButton value={secret.value}>
              {({ copied, copy }) => (
                <Button size="xs" variant="light" onClick={copy}>
                  {copied ? 'Copied' : 'Copy key'}
                </Button>
              )}
            </CopyButton>
          </Group>
          <Text size="sm" fw={600} mt="sm">
            Quick start
          </Text>
          <Group align="flex-start">
            <Code block aria-label="Quick start" style={{ overflowX: 'auto', maxWidth: '100%' }}>
              {quickStart(secret.value)}
            </Code>
            <CopyButton value={quickStart(secret.value)}>
              {({ copied, copy }) => (
                <Button size="xs" variant="light" onClick={copy}>
                  {copied ? 'Copied' : 'Copy command'}
                </Button>
              )}
            </CopyButton>
          </Group>
        </Alert>
      )}
    </Stack>
  );
}

type ListedKey = ConsoleKeysQuery['viewer']['apiKeys']['nodes'][number];

/** With which rights a key acts: its creator's current role, or every key right for the operator's keys. */
function actsAs(key: ListedKey): string {
  if (key.revokedAt) return '—';
  if (!key.createdBy) return 'Operator key: every key right';
  return key.actsAs ? `${key.actsAs.toLowerCase()} (${key.createdBy.name ?? key.createdBy.email})` : '—';
}

/** When a key was revoked, and why when it was not by hand. */
const revokedState = (revokedAt: string, reason: ListedKey['revokedReason']) =>
  reason === 'CREATOR_REMOVED'
    ? `Revoked: its creator left the account (${when(revokedAt)})`
    : `Revoked ${when(revokedAt)}`;

export default function Keys() {
  const [{ data, error }, refetch] = useQuery({ query: KeysQuery, requestPolicy: 'cache-and-network' });
  const [revoking, revoke] = useMutation(RevokeKey);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const [secret, setSecret] = useState<NewKey | null>(null);
  const [confirmation, ask] = useConfirm();
  return (
    <Stack>
      <PageTitle title="API keys">
        Keys belong to the account: REST, GraphQL, MCP and the CLI accept them. A key acts with its creator’s current
        role, never more (an admin’s key cannot reach billing), and stops working when its creator leaves the account.
        Revoking one works at once on every face.
      </PageTitle>
      <CreateKeyForm onCreated={reload} secret={secret} setSecret={setSecret} />
      {confirmation}
      <Title order={3}>Keys</Title>
      {error ? (
        <QueryError error={error} />
      ) : !data ? (
        <Loading />
      ) : (
        <TableScroll label="API keys" minWidth={720}>
          <Table
            aria-label="API keys"
            data={{
              head: ['Name', 'Prefix', 'Created by', 'Acts as', 'Created', 'Last used', 'Expires', 'State'],
              body: data.viewer.apiKeys.nodes.map((key) => [
                key.name,
                <Code key="prefix">{key.prefix}…</Code>,
                key.createdBy?.email ?? 'Operator',
                actsAs(key),
                <Ago key="createdAt" iso={key.createdAt} />,
                <Ago key="lastUsedAt" iso={key.lastUsedAt} />,
                <Ago key="expiresAt" iso={key.expiresAt} />,
                key.revokedAt ? (
                  revokedState(key.revokedAt, key.revokedReason)
                ) : (
                  <Button
                    key="revoke"
                    size="xs"
                    color="red"
                    variant="outline"
                    loading={revoking.fetching && revoking.operation?.variables.id === key.id}
                    aria-label={`Revoke ${key.name}`}
                    onClick={async () => {
                      const yes = await ask({
                        title: `Revoke the key “${key.name}”?`,
                        body: 'Every request with it is refused from now on, on every face.',
                        confirm: 'Revoke',
                        color: 'red',
                      });
                      if (!yes) return;
                      const result = await revoke({ id: key.id });
                      if (result.data?.revokeApiKey.apiKey?.revokedAt && secret?.id === key.id) setSecret(null);
                      reload();
                    }}
                  >
                    Revoke
                  </Button>
                ),
              ]),
            }}
          />
        </TableScroll>
      )}
      <ConnectedApps />
    </Stack>
  );
}
