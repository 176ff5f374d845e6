import { Alert, Button, Group, NativeSelect, Stack, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { useConfirm } from '../components.tsx';
import { graphql } from '../gql/index.ts';
import type { LeadFilter } from '../gql/graphql.ts';
import { type Facets, facetsOf } from './filters.ts';

const SavedSearchesQuery = graphql(`
  query ConsoleSavedSearches {
    savedSearches(first: 100) {
      nodes {
        id
        name
        filter {
          title
          seniority
          department
          emailStatus
          industry
          country
          state
          companyName
          companyCountry
          companyState
          keywords
          technologies
          minEmployees
          maxEmployees
          revenueMin
          revenueMax
          hasEmail
          hasPhone
          excludeDelivered
        }
        createdByName
        viewerMayDelete
      }
    }
  }
`);

const CreateSavedSearch = graphql(`
  mutation ConsoleCreateSavedSearch($input: CreateSavedSearchInput!) {
    createSavedSearch(input: $input) {
      savedSearch {
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

const DeleteSavedSearch = graphql(`
  mutation ConsoleDeleteSavedSearch($id: ID!) {
    deleteSavedSearch(id: $id) {
      deletedId
      userErrors {
        message
      }
    }
  }
`);

/**
 * The account's saved searches: choose one to apply its filters, save the current filters under a
 * name, delete one (whoever saved it, owners and admins). Stored by the API, so every member sees them.
 */
export function SavedSearches({ filter, onApply }: { filter: LeadFilter; onApply(facets: Facets): void }) {
  const [{ data }, refetch] = useQuery({ query: SavedSearchesQuery });
  const [, create] = useMutation(CreateSavedSearch);
  const [, remove] = useMutation(DeleteSavedSearch);
  const [confirmModal, ask] = useConfirm();
  const [chosen, setChosen] = useState('');
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const searches = data?.savedSearches.nodes ?? [];
  const current = searches.find((s) => s.id === chosen);

  const choose = (id: string) => {
    setChosen(id);
    const search = searches.find((s) => s.id === id);
    if (search) onApply(facetsOf(search.filter));
  };
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setNameError(null);
    setProblem(null);
    const answer = await create({ input: { name, filter } });
    const payload = answer.data?.createSavedSearch;
    const errors = payload?.userErrors ?? [];
    const atName = errors.find((e) => e.field?.[1] === 'name');
    if (atName) setNameError(atName.message);
    const other = errors.filter((e) => e !== atName).map((e) => e.message);
    if (answer.error) other.push(answer.error.message);
    if (other.length > 0) setProblem(other.join(' '));
    if (payload?.savedSearch) {
      setName('');
      setChosen(payload.savedSearch.id);
      refetch({ requestPolicy: 'network-only' });
    }
  };
  const del = async () => {
    if (!current) return;
    const yes = await ask({
      title: `Delete the saved search “${current.name}”?`,
      body: 'It is deleted for everyone in the account; the people it found are not affected.',
      confirm: 'Delete',
      color: 'red',
    });
    if (!yes) return;
    const answer = await remove({ id: current.id });
    const refused = answer.data?.deleteSavedSearch.userErrors[0]?.message ?? answer.error?.message;
    if (refused) setProblem(refused);
    else {
      setChosen('');
      refetch({ requestPolicy: 'network-only' });
    }
  };

  return (
    <Stack gap="xs" component="section" aria-label="Saved lead searches">
      {confirmModal}
      <Group align="flex-end" gap="xs" wrap="nowrap">
        <NativeSelect
          label="Saved searches"
          style={{ flex: 1 }}
          value={chosen}
          onChange={(e) => choose(e.currentTarget.value)}
          data={[
            { value: '', label: searches.length === 0 ? 'None saved yet' : 'Choose a saved search' },
            ...searches.map((s) => ({
              value: s.id,
              label: s.createdByName ? `${s.name} (${s.createdByName})` : s.name,
            })),
          ]}
        />
        {current?.viewerMayDelete && (
          <Button variant="default" color="red" aria-label={`Delete ${current.name}`} onClick={() => void del()}>
            Delete
          </Button>
        )}
      </Group>
      <form onSubmit={(e) => void save(e)} aria-label="Save this search">
        <Stack gap={6} align="flex-start">
          <TextInput
            label="Name of this search"
            placeholder="e.g. Directors with an email"
            w="100%"
            value={name}
            error={nameError}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <Button type="submit" variant="light" size="sm" disabled={Object.keys(filter).length === 0}>
            Save search
          </Button>
        </Stack>
      </form>
      {problem && (
        <Alert color="red" role="alert" title="Not saved">
          {problem}
        </Alert>
      )}
    </Stack>
  );
}
