import { useState } from 'react';
import { Alert, Button, Group, Stack, Table, Text, Textarea, TextInput } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { SuppressionKind, SuppressionSource } from '../gql/graphql.ts';
import { Loading, Pager, QueryError, usePages } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { useSession } from '../lib/session-context.tsx';
import { when } from '../lib/format.ts';

const ListQuery = graphql(`
  query ConsoleDoNotContact($after: String) {
    doNotContact(first: 50, after: $after) {
      totalCount
      nodes {
        id
        kind
        value
        source
        note
        createdAt
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

const Add = graphql(`
  mutation ConsoleAddToDoNotContact($input: AddToDoNotContactInput!) {
    addToDoNotContact(input: $input) {
      added
      alreadyListed
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const Remove = graphql(`
  mutation ConsoleRemoveFromDoNotContact($id: ID!) {
    removeFromDoNotContact(id: $id) {
      removedEntryId
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const KIND_WORDS: Record<SuppressionKind, string> = {
  EMAIL: 'Email address',
  DOMAIN: 'Every address at a domain',
  PHONE: 'Phone number',
  PROFILE: 'Profile link',
  HASH: 'Hashed identifier',
};
const SOURCE_WORDS: Record<SuppressionSource, string> = {
  ACCOUNT: 'Your team',
  OPERATOR: 'The service',
  OPT_OUT: 'The person opted out',
  ERASURE: 'Erased at the person’s request',
  DROP: 'California deletion request',
};

/** What a pasted line is: an address, a profile link, a phone number or a domain. */
function kindOf(line: string): SuppressionKind {
  if (/^[^@\s]+@[^@\s]+$/.test(line)) return 'EMAIL';
  if (/linkedin|twitter|x\.com|facebook|instagram|github|\//i.test(line)) return 'PROFILE';
  if (/^[+(\d][\d\s().-]{5,}$/.test(line)) return 'PHONE';
  return 'DOMAIN';
}

const MAX_LINES = 1000;

/** The account's do-not-contact list: paste people in, read it newest first, owners and admins take entries off. */
export default function DoNotContact() {
  const { session } = useSession();
  const mayRemove = session.permissions.includes('suppressions');
  const pages = usePages();
  const [{ data, error }, refetch] = useQuery({
    query: ListQuery,
    variables: { after: pages.after },
    requestPolicy: 'cache-and-network',
  });
  const [adding, add] = useMutation(Add);
  const [, remove] = useMutation(Remove);
  const [text, setText] = useState('');
  const [note, setNote] = useState('');
  const [problems, setProblems] = useState<string[]>([]);
  const [answer, setAnswer] = useState<string | null>(null);
  const [removeError, setRemoveError] = useState<string | null>(null);

  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const submit = async () => {
    setAnswer(null);
    if (lines.length > MAX_LINES) {
      setProblems([`At most ${MAX_LINES.toLocaleString('en-US')} lines at a time; this holds ${lines.length}.`]);
      return;
    }
    const entries = lines.map((value) => ({ kind: kindOf(value), value }));
    const result = await add({ input: { entries, ...(note.trim() ? { note: note.trim() } : {}) } });
    const payload = result.data?.addToDoNotContact;
    if (result.error) return setProblems([result.error.message]);
    if (!payload) return;
    if (payload.userErrors.length > 0) {
      // entries.<i>.value names the line; the rest is said as it comes.
      setProblems(
        payload.userErrors.map((e) => {
          const field = e.field ?? [];
          const at = field.indexOf('entries');
          const line = at >= 0 ? Number(field[at + 1]) : -1;
          return line >= 0 ? `Line ${line + 1} (${lines[line]}): ${e.message}` : e.message;
        }),
      );
      return;
    }
    setProblems([]);
    setText('');
    setNote('');
    setAnswer(
      `Added ${payload.added ?? 0}${payload.alreadyListed ? `; ${payload.alreadyListed} already on the list` : ''}.`,
    );
    refetch({ requestPolicy: 'network-only' });
  };

  const list = data?.doNotContact;
  return (
    <Stack>
      <PageTitle title="Do not contact">
        People your account’s runs, lead searches and enrichments never return, unbilled. Paste email addresses,
        domains, phone numbers or profile links, one a line.
      </PageTitle>
      <Stack gap="xs" maw={640}>
        <Textarea
          label="People to add"
          description="One a line: jane@acme.com, acme.com (every address there), +1 303 555 0142, linkedin.com/in/jane"
          autosize
          minRows={4}
          maxRows={12}
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          error={problems.length > 0 ? problems.join(' ') : undefined}
        />
        <TextInput
          label="Why (optional)"
          description="Kept with each entry, for whoever reads the list later"
          value={note}
          onChange={(e) => setNote(e.currentTarget.value)}
        />
        <Group>
          <Button onClick={() => void submit()} loading={adding.fetching} disabled={lines.length === 0}>
            Add {lines.length > 0 ? `${lines.length} ${lines.length === 1 ? 'entry' : 'entries'}` : 'to the list'}
          </Button>
          {answer && (
            <Text size="sm" role="status">
              {answer}
            </Text>
          )}
        </Group>
      </Stack>
      {removeError && <Alert color="red">{removeError}</Alert>}
      {error ? (
        <QueryError error={error} />
      ) : !list ? (
        <Loading />
      ) : list.totalCount === 0 ? (
        <Text c="dimmed">The list is empty. People added here are left out of everything the account receives.</Text>
      ) : (
        <>
          <Text size="sm">
            {list.totalCount.toLocaleString('en-US')} {list.totalCount === 1 ? 'entry' : 'entries'}
          </Text>
          <Table.ScrollContainer minWidth={640}>
            <Table
              aria-label="Do not contact"
              data={{
                head: ['Who', 'What it is', 'From', 'Why', 'Added', ...(mayRemove ? [''] : [])],
                body: list.nodes.map((e) => [
                  e.value,
                  KIND_WORDS[e.kind],
                  SOURCE_WORDS[e.source],
                  e.note ?? '',
                  when(e.createdAt),
                  ...(!mayRemove
                    ? []
                    : e.source === 'OPT_OUT'
                      ? ['Kept: the person asked']
                      : [
                          <Button
                            key="remove"
                            size="xs"
                            variant="outline"
                            color="red"
                            aria-label={`Remove ${e.value}`}
                            onClick={async () => {
                              const done = await remove({ id: e.id });
                              const refused = done.data?.removeFromDoNotContact.userErrors[0]?.message;
                              setRemoveError(done.error?.message ?? refused ?? null);
                              refetch({ requestPolicy: 'network-only' });
                            }}
                          >
                            Remove
                          </Button>,
                        ]),
                ]),
              }}
            />
          </Table.ScrollContainer>
          <Pager pages={pages} pageInfo={list.pageInfo} />
        </>
      )}
    </Stack>
  );
}
