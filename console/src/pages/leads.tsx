import { useState, type FormEvent } from 'react';
import { csvOf } from '../lib/csv.ts';
import { Alert, Button, Checkbox, Group, Stack, Table, Text, TextInput } from '@mantine/core';
import { useClient, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { ConsoleLeadsQuery, LeadFilter } from '../gql/graphql.ts';
import { Loading, QueryError, TableScroll } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { count } from '../lib/format.ts';

const LeadsQuery = graphql(`
  query ConsoleLeads($filter: LeadFilter, $first: Int, $after: String) {
    leads(filter: $filter, first: $first, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        id
        fullName
        title
        email
        phone
        city
        state
        country
        linkedinUrl
        company {
          name
          domain
        }
      }
    }
  }
`);

type Lead = NonNullable<ConsoleLeadsQuery['leads']>['nodes'][number];
const PAGE = 25;
/** The most rows one export reads (each counts against the daily allowance). */
const EXPORT_MAX = 1000;

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function filterOf(form: Record<string, string | boolean>): LeadFilter {
  const filter: LeadFilter = {};
  if (form.title) filter.title = String(form.title);
  if (form.industry) filter.industry = list(String(form.industry));
  if (form.country) filter.country = list(String(form.country));
  if (form.city) filter.city = String(form.city);
  if (form.companyName) filter.companyName = String(form.companyName);
  if (form.hasEmail) filter.hasEmail = true;
  return filter;
}

const csvRow = (lead: Lead) => ({
  name: lead.fullName,
  title: lead.title,
  email: lead.email,
  phone: lead.phone,
  city: lead.city,
  state: lead.state,
  country: lead.country,
  linkedin: lead.linkedinUrl,
  company: lead.company?.name,
  domain: lead.company?.domain,
});

export default function Leads() {
  const client = useClient();
  const [form, setForm] = useState<Record<string, string | boolean>>({
    title: '',
    industry: '',
    country: '',
    city: '',
    companyName: '',
    hasEmail: false,
  });
  const [filter, setFilter] = useState<LeadFilter>({});
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [exporting, setExporting] = useState(false);
  const [{ data, error, fetching }] = useQuery({
    query: LeadsQuery,
    variables: { filter, first: PAGE, after: cursors.at(-1) ?? null },
  });
  const locked = error?.graphQLErrors.find((e) => e.extensions?.code === 'PLAN_REQUIRED');

  const search = (event: FormEvent) => {
    event.preventDefault();
    setFilter(filterOf(form));
    setCursors([null]);
  };
  const text = (name: string, label: string, description?: string) => (
    <TextInput
      label={label}
      description={description}
      value={String(form[name] ?? '')}
      onChange={(e) => setForm({ ...form, [name]: e.currentTarget.value })}
    />
  );

  const exportCsv = async () => {
    setExporting(true);
    try {
      const rows: Lead[] = [];
      let after: string | null = null;
      while (rows.length < EXPORT_MAX) {
        const page = await client
          .query(LeadsQuery, { filter, first: 100, after }, { requestPolicy: 'network-only' })
          .toPromise();
        const leads: ConsoleLeadsQuery['leads'] | undefined = page.data?.leads;
        if (!leads) break;
        rows.push(...leads.nodes);
        if (!leads.pageInfo.hasNextPage) break;
        after = leads.pageInfo.endCursor ?? null;
      }
      const blob = new Blob([csvOf(rows.slice(0, EXPORT_MAX).map(csvRow))], { type: 'text/csv' });
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = 'leads.csv';
      link.click();
      URL.revokeObjectURL(link.href);
    } finally {
      setExporting(false);
    }
  };

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
  return (
    <Stack>
      <PageTitle title="Lead database">Every search counts its rows against the daily database allowance.</PageTitle>
      <form onSubmit={search} aria-label="Lead filters">
        <Group align="flex-end">
          {text('title', 'Job title')}
          {text('industry', 'Industries', 'Comma separated')}
          {text('country', 'Countries', 'Comma separated')}
          {text('city', 'City')}
          {text('companyName', 'Company')}
          <Checkbox
            label="Has an email"
            checked={Boolean(form.hasEmail)}
            onChange={(e) => setForm({ ...form, hasEmail: e.currentTarget.checked })}
          />
          <Button type="submit">Search</Button>
        </Group>
      </form>
      {error ? (
        <QueryError error={error} />
      ) : !data?.leads ? (
        <Loading />
      ) : (
        <>
          <Group>
            <Text>{count(data.leads.totalCount)} leads match</Text>
            <Button
              variant="light"
              loading={exporting}
              onClick={() => void exportCsv()}
              disabled={data.leads.totalCount === 0}
            >
              Export to CSV (first {count(EXPORT_MAX)})
            </Button>
          </Group>
          {data.leads.totalCount === 0 ? (
            <Text>No lead matches these filters: clear one (a country, a title) or use fewer words.</Text>
          ) : (
            <TableScroll label="Leads" minWidth={720}>
              <Table
                aria-label="Leads"
                aria-busy={fetching}
                data={{
                  head: ['Name', 'Title', 'Company', 'Email', 'Location'],
                  body: data.leads.nodes.map((lead) => [
                    lead.fullName,
                    lead.title,
                    lead.company?.name,
                    lead.email,
                    [lead.city, lead.state, lead.country].filter(Boolean).join(', '),
                  ]),
                }}
              />
            </TableScroll>
          )}
          <Group>
            <Button variant="default" disabled={cursors.length <= 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
              Previous page
            </Button>
            <Button
              variant="default"
              disabled={!data.leads.pageInfo.hasNextPage}
              onClick={() => setCursors((c) => [...c, data.leads?.pageInfo.endCursor ?? null])}
            >
              Next page
            </Button>
          </Group>
        </>
      )}
    </Stack>
  );
}
