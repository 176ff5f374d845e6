import { useCallback, useEffect, useMemo, useState } from 'react';
import { Alert, Badge, Button, Checkbox, Grid, Group, Stack, Table, Text, UnstyledButton } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import type { ConsoleLeadSearchQuery } from '../gql/graphql.ts';
import { Loading, Pager, QueryError, TableScroll, usePages } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { count } from '../lib/format.ts';
import { LeadSearchQuery, RevealLeads, type PreviewPerson, type RevealedPerson } from '../lead-search/documents.ts';
import { FacetSidebar } from '../lead-search/facets.tsx';
import { EMAIL_STATUS_WORDS, type Facets, filterOf, NO_FACETS } from '../lead-search/filters.ts';
import { PersonDrawer } from '../lead-search/person-drawer.tsx';
import { SavedSearches } from '../lead-search/saved-searches.tsx';
import { SelectionActions } from '../lead-search/selection-actions.tsx';

const PAGE = 25;

const place = (p: PreviewPerson) => [p.city, p.state, p.country].filter(Boolean).join(', ');
const emailWords = (p: PreviewPerson) =>
  p.hasEmail ? (EMAIL_STATUS_WORDS[p.emailStatus ?? ''] ?? p.emailStatus ?? 'On file') : 'None';

/**
 * The lead database as a people search: facets on the left, the free preview on the right (no contact
 * details, no allowance spent), rows selected for an export, an enrichment or a run, a person's drawer.
 * Contact details come only from the metered reveal, whose cost is said before it runs.
 */
export default function Leads() {
  const [facets, setFacets] = useState<Facets>(NO_FACETS);
  const filter = useMemo(() => filterOf(facets), [facets]);
  const pages = usePages();
  const [selected, setSelected] = useState<Map<string, PreviewPerson>>(new Map());
  const [opened, setOpened] = useState<PreviewPerson | null>(null);
  const [{ data, error, fetching }, refetch] = useQuery({
    query: LeadSearchQuery,
    variables: { filter, first: PAGE, after: pages.after },
  });
  const [, revealMutation] = useMutation(RevealLeads);
  // The last answer stays on screen while the next search runs, so the table does not flash.
  const [shown, setShown] = useState<ConsoleLeadSearchQuery['leadSearch']>(null);
  useEffect(() => {
    if (data) setShown(data.leadSearch);
  }, [data]);
  const locked = error?.graphQLErrors.find((e) => e.extensions?.code === 'PLAN_REQUIRED');

  const changeFacets = useCallback(
    (next: Facets) => {
      setFacets(next);
      pages.reset();
    },
    [pages.reset],
  );
  const reveal = useCallback(
    async (ids: string[]): Promise<RevealedPerson[] | { error: string }> => {
      const answer = await revealMutation({ ids });
      const payload = answer.data?.revealLeads;
      const refused = payload?.userErrors[0]?.message ?? answer.error?.message;
      // The allowance left and who was received changed: the search is read again.
      refetch({ requestPolicy: 'network-only' });
      if (refused || !payload?.leads) return { error: refused ?? 'Nothing was revealed.' };
      return payload.leads;
    },
    [revealMutation, refetch],
  );

  if (locked) {
    return (
      <Stack>
        <PageTitle title="Lead database" />
        <Alert color="yellow" title="Locked on this plan" role="status">
          {locked.message} Upgrade the plan to search the lead database, page through it and export selections.
        </Alert>
      </Stack>
    );
  }
  const page = shown?.nodes ?? [];
  const remaining = shown?.dailyAllowanceRemaining ?? 0;
  const onPage = page.filter((p) => selected.has(p.id)).length;
  const toggle = (people: PreviewPerson[], on: boolean) =>
    setSelected((current) => {
      const next = new Map(current);
      for (const p of people) on ? next.set(p.id, p) : next.delete(p.id);
      return next;
    });

  return (
    <Stack>
      <PageTitle title="Lead database">
        Searching and browsing are free. Contact details count against the daily allowance only when you export people
        or show a person’s details{shown ? `: ${count(remaining)} records left today.` : '.'}
      </PageTitle>
      <Grid gap="lg">
        <Grid.Col span={{ base: 12, md: 4, lg: 3 }}>
          <Stack gap="lg">
            <SavedSearches filter={filter} onApply={changeFacets} />
            <FacetSidebar facets={facets} onChange={changeFacets} />
          </Stack>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 8, lg: 9 }}>
          <Stack>
            {error ? (
              <QueryError error={error} />
            ) : !shown ? (
              <Loading />
            ) : (
              <>
                <Text fw={500} role="status" aria-live="polite">
                  {shown.totalCountIsEstimate ? 'About ' : ''}
                  {count(shown.totalCount)} leads match
                </Text>
                {selected.size > 0 && (
                  <SelectionActions
                    selected={[...selected.values()]}
                    remaining={remaining}
                    reveal={reveal}
                    onClear={() => setSelected(new Map())}
                  />
                )}
                {shown.totalCount === 0 ? (
                  <Stack gap="xs" align="flex-start">
                    <Text>
                      No one matches these filters. Clear one (a seniority, a country, a company size) or use fewer
                      words in the job title and company.
                    </Text>
                    <Button variant="light" onClick={() => changeFacets(NO_FACETS)}>
                      Clear filters
                    </Button>
                  </Stack>
                ) : (
                  <TableScroll label="Leads" minWidth={760}>
                    <Table aria-label="Leads" aria-busy={fetching} highlightOnHover>
                      <Table.Thead>
                        <Table.Tr>
                          <Table.Th w={40}>
                            <Checkbox
                              aria-label="Select this page"
                              checked={onPage > 0 && onPage === page.length}
                              indeterminate={onPage > 0 && onPage < page.length}
                              onChange={(e) => toggle(page, e.currentTarget.checked)}
                            />
                          </Table.Th>
                          <Table.Th>Name</Table.Th>
                          <Table.Th>Title</Table.Th>
                          <Table.Th>Company</Table.Th>
                          <Table.Th>Location</Table.Th>
                          <Table.Th>Email</Table.Th>
                        </Table.Tr>
                      </Table.Thead>
                      <Table.Tbody>
                        {page.map((p) => (
                          <Table.Tr key={p.id} style={{ cursor: 'pointer' }} onClick={() => setOpened(p)}>
                            <Table.Td onClick={(e) => e.stopPropagation()}>
                              <Checkbox
                                aria-label={`Select ${p.fullName}`}
                                checked={selected.has(p.id)}
                                onChange={(e) => toggle([p], e.currentTarget.checked)}
                              />
                            </Table.Td>
                            <Table.Td>
                              <UnstyledButton
                                fw={500}
                                c="blue.9"
                                aria-label={`Open ${p.fullName}`}
                                onClick={(e) => {
                                  e.stopPropagation();
                                  setOpened(p);
                                }}
                              >
                                {p.fullName}
                              </UnstyledButton>
                            </Table.Td>
                            <Table.Td>{p.title}</Table.Td>
                            <Table.Td>{p.company?.name}</Table.Td>
                            <Table.Td>{place(p)}</Table.Td>
                            <Table.Td>
                              <Group gap={4} wrap="nowrap">
                                {emailWords(p)}
                                {p.received && (
                                  <Badge size="xs" variant="light" color="green">
                                    Exported
                                  </Badge>
                                )}
                              </Group>
                            </Table.Td>
                          </Table.Tr>
                        ))}
                      </Table.Tbody>
                    </Table>
                  </TableScroll>
                )}
                <Pager pages={pages} pageInfo={shown.pageInfo} />
              </>
            )}
          </Stack>
        </Grid.Col>
      </Grid>
      <PersonDrawer person={opened} remaining={remaining} onClose={() => setOpened(null)} reveal={reveal} />
    </Stack>
  );
}
