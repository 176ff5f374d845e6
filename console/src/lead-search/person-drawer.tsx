import { Alert, Anchor, Badge, Button, Divider, Drawer, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useState, type ReactNode } from 'react';
import { Money } from '../components.tsx';
import { count, word } from '../lib/format.ts';
import type { PreviewPerson, RevealedPerson } from './documents.ts';
import { DEPARTMENT_WORDS, EMAIL_STATUS_WORDS } from './filters.ts';
import { useSeniorityWords } from './seniority.ts';

const place = (p: { city?: string | null; state?: string | null; country?: string | null }) =>
  [p.city, p.state, p.country].filter(Boolean).join(', ') || '—';

/** Label and value rows, as a table a screen reader reads by its header cells. */
function Facts({ label, rows }: { label: string; rows: [string, ReactNode][] }) {
  return (
    <Table aria-label={label} withRowBorders={false} verticalSpacing={4}>
      <Table.Tbody>
        {rows.map(([name, value]) => (
          <Table.Tr key={name}>
            <Table.Th scope="row" w="40%" fw={500}>
              {name}
            </Table.Th>
            <Table.Td>{value ?? '—'}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/**
 * A person of the search and their company, from the free preview; "Show contact details" reveals the
 * email and phones through the metered path, its cost (1 record, or nothing for a person the account
 * has) said beside it first.
 */
export function PersonDrawer({
  person,
  remaining,
  onClose,
  reveal,
}: {
  person: PreviewPerson | null;
  remaining: number;
  onClose(): void;
  reveal(ids: string[]): Promise<RevealedPerson[] | { error: string }>;
}) {
  const seniorities = useSeniorityWords();
  const [contacts, setContacts] = useState<Record<string, RevealedPerson>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const shown = person ? contacts[person.id] : undefined;
  const show = async () => {
    if (!person) return;
    setBusy(true);
    setError(null);
    const answer = await reveal([person.id]);
    setBusy(false);
    const [revealed] = 'error' in answer ? [] : answer;
    if ('error' in answer) setError(answer.error);
    else if (revealed) setContacts((c) => ({ ...c, [person.id]: revealed }));
  };
  const company = person?.company;
  const cost = person?.received
    ? 'Free: you have exported this person before.'
    : `Uses 1 of your ${count(remaining)} records left today.`;
  return (
    <Drawer
      opened={person !== null}
      onClose={onClose}
      position="right"
      size="md"
      title={person?.fullName ?? ''}
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      {person && (
        <Stack gap="sm">
          <Text>
            {person.title ?? 'No title'}
            {company ? ` at ${company.name}` : ''}
          </Text>
          <Facts
            label="Person"
            rows={[
              ['Seniority', word(seniorities, person.seniority)],
              ['Department', word(DEPARTMENT_WORDS, person.department)],
              ['Location', place(person)],
              [
                'LinkedIn',
                person.linkedinUrl ? (
                  <Anchor key="linkedin" href={person.linkedinUrl} target="_blank" rel="noreferrer">
                    Profile
                  </Anchor>
                ) : null,
              ],
              ['Email', person.hasEmail ? `On file (${word(EMAIL_STATUS_WORDS, person.emailStatus)})` : 'None'],
              ['Phone', person.hasPhone ? 'On file' : 'None'],
            ]}
          />
          {shown ? (
            <Facts
              label="Contact details"
              rows={[
                ['Email', shown.email],
                ['Phone', shown.phone],
                ['Mobile', shown.mobile],
              ]}
            />
          ) : (
            <Group gap="sm" align="center">
              <Button
                onClick={() => void show()}
                loading={busy}
                disabled={!person.received && remaining < 1}
                aria-describedby="reveal-cost"
              >
                Show contact details
              </Button>
              <Text id="reveal-cost" size="sm">
                {cost}
              </Text>
            </Group>
          )}
          {error && (
            <Alert color="red" role="alert" title="Not shown">
              {error}
            </Alert>
          )}
          {company && (
            <>
              <Divider />
              <Title order={3} size="h4">
                {company.name}
              </Title>
              <Facts
                label="Company"
                rows={[
                  [
                    'Website',
                    <Anchor key="site" href={company.website} target="_blank" rel="noreferrer">
                      {company.domain}
                    </Anchor>,
                  ],
                  ['Industry', company.industry],
                  ['Size', company.size ? `${company.size} employees` : null],
                  ['Employees', company.employeesCount == null ? null : count(company.employeesCount)],
                  [
                    'Revenue',
                    company.annualRevenue == null ? null : <Money key="revenue" amount={company.annualRevenue} />,
                  ],
                  ['Headquarters', place(company)],
                  ['Founded', company.founded],
                ]}
              />
              {company.technologies.length > 0 && (
                <Group gap={4} aria-label="Technologies" role="list">
                  {company.technologies.map((t) => (
                    <Badge key={t} variant="light" color="gray" role="listitem">
                      {t}
                    </Badge>
                  ))}
                </Group>
              )}
            </>
          )}
        </Stack>
      )}
    </Drawer>
  );
}
