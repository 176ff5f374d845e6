import { useState } from 'react';
import Papa from 'papaparse';
import { csvOf } from '../lib/csv.ts';
import { Alert, Button, FileInput, Group, NativeSelect, Stack, Table, Text } from '@mantine/core';
import { useMutation } from 'urql';
import { graphql } from '../gql/index.ts';
import type { LeadEnrichmentInput, LocalBusinessEnrichmentInput } from '../gql/graphql.ts';
import { UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { count } from '../lib/format.ts';

const EnrichLeads = graphql(`
  mutation ConsoleEnrich($rows: [LeadEnrichmentInput!]!, $preview: Boolean) {
    enrichLeads(rows: $rows, preview: $preview) {
      preview
      summary {
        total
        matched
        notFound
      }
      sample {
        ...EnrichedRow
      }
      rows {
        ...EnrichedRow
      }
      dailyAllowanceRemaining
      userErrors {
        code
        field
        message
      }
    }
  }
  fragment EnrichedRow on LeadEnrichmentRow {
    matchStatus
    matchedBy
    lead {
      fullName
      title
      email
      phone
      linkedinUrl
      companyName
      companyDomain
      city
      country
    }
  }
`);

const EnrichLocalBusinesses = graphql(`
  mutation ConsoleEnrichLocalBusinesses($rows: [LocalBusinessEnrichmentInput!]!, $preview: Boolean) {
    enrichLocalBusinesses(rows: $rows, preview: $preview) {
      preview
      summary {
        total
        matched
        notFound
      }
      sample {
        ...EnrichedBusinessRow
      }
      rows {
        ...EnrichedBusinessRow
      }
      dailyAllowanceRemaining
      userErrors {
        code
        field
        message
      }
    }
  }
  fragment EnrichedBusinessRow on LocalBusinessEnrichmentRow {
    matchStatus
    matchedBy
    business {
      name
      phone
      website
      emails
      address
      city
      state
      postalCode
      countryCode
      category
      rating
      reviewCount
      contactPerson
    }
  }
`);

/** A matched row, whichever the kind: what was found, as flat fields. */
interface Enriched {
  matchStatus: string;
  matchedBy?: string | null;
  found: Record<string, unknown> | null | undefined;
}

interface Answer {
  preview?: boolean | null;
  summary?: { total: number; matched: number } | null;
  sample?: Enriched[] | null;
  rows?: Enriched[] | null;
  dailyAllowanceRemaining?: number | null;
  userErrors: readonly { message: string; field?: readonly string[] | null }[];
}

/**
 * What the page enriches: the API's match keys (each read from a column of the uploaded file), the
 * columns of the result table, and the prefix of the found fields in the downloaded CSV.
 */
interface Kind {
  label: string;
  keys: { key: keyof LeadEnrichmentInput | keyof LocalBusinessEnrichmentInput; label: string }[];
  columns: { field: string; header: string }[];
  prefix: string;
}

const KINDS = {
  people: {
    label: 'People',
    keys: [
      { key: 'email', label: 'Email column' },
      { key: 'social', label: 'Social profile column' },
      { key: 'mobile', label: 'Mobile number column' },
      { key: 'domain', label: 'Company domain column' },
    ],
    columns: [
      { field: 'fullName', header: 'Name' },
      { field: 'title', header: 'Title' },
      { field: 'email', header: 'Email' },
      { field: 'phone', header: 'Phone' },
      { field: 'companyName', header: 'Company' },
    ],
    prefix: 'lead',
  },
  businesses: {
    label: 'Local businesses',
    keys: [
      { key: 'phone', label: 'Phone column' },
      { key: 'name', label: 'Business name column' },
      { key: 'city', label: 'City column' },
      { key: 'postalCode', label: 'Postal code column' },
      { key: 'state', label: 'State column' },
      { key: 'country', label: 'Country column' },
      { key: 'website', label: 'Website column' },
    ],
    columns: [
      { field: 'name', header: 'Name' },
      { field: 'phone', header: 'Phone' },
      { field: 'website', header: 'Website' },
      { field: 'city', header: 'City' },
      { field: 'category', header: 'Category' },
    ],
    prefix: 'business',
  },
} satisfies Record<string, Kind>;
type KindName = keyof typeof KINDS;

const MAX_ROWS = 1000;

/** Guesses a column for a key from its header (an "Email" column for email, "Postal code" for postalCode). */
const guess = (headers: string[], key: string) =>
  headers.find((h) =>
    h
      .toLowerCase()
      .replace(/[^a-z]/g, '')
      .includes(key.toLowerCase()),
  ) ?? '';

/** The guessed column of each of the kind's keys. */
const guesses = (kind: Kind, headers: string[]) =>
  Object.fromEntries(kind.keys.map(({ key }) => [key, guess(headers, key)]));

/** Rows of either mutation with what was found (a lead, a business) as `found`. */
const withFound = (
  rows:
    | { matchStatus: string; matchedBy?: string | null; lead?: object | null; business?: object | null }[]
    | null
    | undefined,
): Enriched[] | undefined =>
  rows?.map(({ lead, business, ...row }) => ({
    ...row,
    found: (lead ?? business) as Record<string, unknown> | null | undefined,
  }));

/** A found field as a cell or CSV value (lists such as a business's emails joined). */
const text = (value: unknown) => (Array.isArray(value) ? value.join('; ') : value == null ? '' : String(value));

function download(kind: Kind, rows: Enriched[], source: Record<string, string>[]) {
  const out = rows.map((row, i) => ({
    ...source[i],
    match_status: row.matchStatus,
    matched_by: row.matchedBy ?? '',
    // urql's __typename is not a field of the result.
    ...Object.fromEntries(
      Object.entries(row.found ?? {})
        .filter(([k]) => k !== '__typename')
        .map(([k, v]) => [`${kind.prefix}_${k}`, text(v)]),
    ),
  }));
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([csvOf(out)], { type: 'text/csv' }));
  link.download = 'enriched.csv';
  link.click();
  URL.revokeObjectURL(link.href);
}

function ResultTable({ kind, rows, label }: { kind: Kind; rows: Enriched[]; label: string }) {
  return (
    <Table
      aria-label={label}
      data={{
        head: ['Match', ...kind.columns.map((c) => c.header)],
        body: rows.slice(0, 50).map((row) => [row.matchStatus, ...kind.columns.map((c) => text(row.found?.[c.field]))]),
      }}
    />
  );
}

export default function Enrichment() {
  const [kindName, setKindName] = useState<KindName>('people');
  const [file, setFile] = useState<{ name: string; headers: string[]; rows: Record<string, string>[] } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [mapping, setMapping] = useState<Record<string, string>>({});
  const [leads, enrichLeads] = useMutation(EnrichLeads);
  const [businesses, enrichBusinesses] = useMutation(EnrichLocalBusinesses);
  const kind: Kind = KINDS[kindName];

  const choose = (name: KindName) => {
    setKindName(name);
    if (file) setMapping(guesses(KINDS[name], file.headers));
  };
  const read = (chosen: File | null) => {
    setFile(null);
    setProblem(null);
    if (!chosen) return;
    Papa.parse<Record<string, string>>(chosen, {
      header: true,
      skipEmptyLines: true,
      complete: ({ data, meta }) => {
        if (data.length > MAX_ROWS)
          return setProblem(`The file has ${count(data.length)} rows; enrichment takes ${count(MAX_ROWS)} at most.`);
        const headers = meta.fields ?? [];
        setFile({ name: chosen.name, headers, rows: data });
        setMapping(guesses(kind, headers));
      },
      error: (err) => setProblem(err.message),
    });
  };
  const rows = () =>
    (file?.rows ?? []).map((row) =>
      Object.fromEntries(
        kind.keys.flatMap(({ key }) => {
          const column = mapping[key];
          return column ? [[key, row[column] || null]] : [];
        }),
      ),
    );
  const enrich = (preview: boolean) =>
    void (kindName === 'people'
      ? enrichLeads({ rows: rows() as LeadEnrichmentInput[], preview })
      : enrichBusinesses({ rows: rows() as LocalBusinessEnrichmentInput[], preview }));

  const result = kindName === 'people' ? leads : businesses;
  const data = kindName === 'people' ? leads.data?.enrichLeads : businesses.data?.enrichLocalBusinesses;
  const answer: Answer | undefined = data && { ...data, sample: withFound(data.sample), rows: withFound(data.rows) };
  const previewing = result.fetching && result.operation?.variables.preview === true;
  const enriching = result.fetching && result.operation?.variables.preview === false;

  return (
    <Stack>
      <PageTitle title="Enrichment">
        Upload a CSV of up to 1,000 people or local businesses, say which columns hold what, preview the matches
        (masked, free), then enrich and download. Matches count against the daily enrichment allowance.
      </PageTitle>
      <NativeSelect
        label="What to enrich"
        value={kindName}
        onChange={(e) => choose(e.currentTarget.value as KindName)}
        data={Object.entries(KINDS).map(([value, k]) => ({ value, label: k.label }))}
        w={240}
      />
      <FileInput
        label="CSV file"
        accept=".csv,text/csv"
        clearable
        clearButtonProps={{ 'aria-label': 'Clear the file' }}
        onChange={read}
      />
      {problem && (
        <Alert color="red" role="alert">
          {problem}
        </Alert>
      )}
      {file && (
        <>
          <Text size="sm">
            {file.name}: {count(file.rows.length)} rows
          </Text>
          <Group align="flex-end">
            {kind.keys.map(({ key, label }) => (
              <NativeSelect
                key={key}
                label={label}
                value={mapping[key] ?? ''}
                onChange={(e) => setMapping({ ...mapping, [key]: e.currentTarget.value })}
                data={[{ value: '', label: 'Not in the file' }, ...file.headers]}
              />
            ))}
          </Group>
          <Group>
            <Button variant="default" loading={previewing} onClick={() => enrich(true)}>
              Preview matches
            </Button>
            <Button loading={enriching} onClick={() => enrich(false)}>
              Enrich {count(file.rows.length)} rows
            </Button>
          </Group>
        </>
      )}
      {answer && <UserErrors errors={answer.userErrors} />}
      {result.error && <Alert color="red">{result.error.message}</Alert>}
      {answer?.summary && (
        <Text role="status">
          {count(answer.summary.matched)} of {count(answer.summary.total)} rows match
          {answer.dailyAllowanceRemaining != null && ` · ${count(answer.dailyAllowanceRemaining)} matches left today`}
        </Text>
      )}
      {answer?.preview && answer.sample && (
        <ResultTable kind={kind} rows={answer.sample} label="Preview of the matches (masked)" />
      )}
      {answer && !answer.preview && answer.rows && file && (
        <>
          <Group>
            <Button variant="light" onClick={() => download(kind, answer.rows ?? [], file.rows)}>
              Download enriched CSV
            </Button>
          </Group>
          <ResultTable kind={kind} rows={answer.rows} label="Enriched rows (first 50)" />
        </>
      )}
    </Stack>
  );
}
