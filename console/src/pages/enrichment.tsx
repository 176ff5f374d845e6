import { useState } from 'react';
import {
  Alert,
  Button,
  FileInput,
  Fieldset,
  Group,
  List,
  NativeSelect,
  SimpleGrid,
  Stack,
  Table,
  Text,
} from '@mantine/core';
import { useLocation } from 'react-router';
import { useMutation } from 'urql';
import { graphql } from '../gql/index.ts';
import type { LeadEnrichmentInput, LocalBusinessEnrichmentInput } from '../gql/graphql.ts';
import { TableScroll, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { count, ENRICHMENT_MATCH_WORDS, word } from '../lib/format.ts';
import { autoMap, type CsvFile, readCsv } from '../lib/column-mapping.ts';
import {
  type Enriched,
  enrichedName,
  type Kind,
  KINDS,
  type KindName,
  resultColumns,
  saveCsv,
  skipReason,
  withFound,
} from '../enrichment-kinds.ts';
import { EnrichmentHistory } from '../enrichment-history.tsx';
import { Cell } from '../cells.tsx';

const EnrichLeads = graphql(`
  mutation ConsoleEnrich($rows: [LeadEnrichmentInput!]!, $preview: Boolean, $fileName: String) {
    enrichLeads(rows: $rows, preview: $preview, fileName: $fileName) {
      preview
      summary {
        total
        matched
        notFound
        skipped
      }
      skipped {
        row
        reasons
      }
      job {
        id
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
  mutation ConsoleEnrichLocalBusinesses(
    $rows: [LocalBusinessEnrichmentInput!]!
    $preview: Boolean
    $fileName: String
  ) {
    enrichLocalBusinesses(rows: $rows, preview: $preview, fileName: $fileName) {
      preview
      summary {
        total
        matched
        notFound
        skipped
      }
      skipped {
        row
        reasons
      }
      job {
        id
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

interface Answer {
  preview?: boolean | null;
  summary?: { total: number; matched: number; skipped: number } | null;
  skipped?: readonly { row: number; reasons: readonly string[] }[] | null;
  sample?: Enriched[] | null;
  rows?: Enriched[] | null;
  dailyAllowanceRemaining?: number | null;
  userErrors: readonly { message: string; field?: readonly string[] | null }[];
}

const MAX_ROWS = 1000;
const SHOWN = 50;

/** The uploaded file: its name, rows and the file line each row starts on. */
type Upload = CsvFile & { name: string };

function ResultTable({
  kind,
  rows,
  lines,
  label,
}: {
  kind: Kind;
  rows: Enriched[];
  /** The file line of each row, or none (a preview's sample). */
  lines?: number[];
  label: string;
}) {
  return (
    <TableScroll label={label} minWidth={720}>
      <Table
        aria-label={label}
        data={{
          head: [...(lines ? ['Line'] : []), 'Match', ...kind.columns.map((c) => c.header)],
          body: rows
            .slice(0, SHOWN)
            .map((row, i) => [
              ...(lines ? [String(lines[i] ?? i + 2)] : []),
              word(ENRICHMENT_MATCH_WORDS, row.matchStatus),
              ...kind.columns.map((c) => (
                <Cell key={c.field} value={row.found?.[c.field]} label={`${c.header}, row ${i + 1}`} />
              )),
            ]),
        }}
      />
    </TableScroll>
  );
}

/** The rows left out, each named by its line in the file, with why in plain words. */
function Skipped({ skipped, lines }: { skipped: NonNullable<Answer['skipped']>; lines: number[] }) {
  if (skipped.length === 0) return null;
  return (
    <Alert color="yellow" title={`${count(skipped.length)} ${skipped.length === 1 ? 'row' : 'rows'} skipped`}>
      <Text size="sm" mb="xs">
        Nothing usable to match on, so not looked up and not counted. Fix them in the file and enrich them again.
      </Text>
      <List size="sm" aria-label="Skipped rows">
        {skipped.slice(0, SHOWN).map((s) => (
          <List.Item key={s.row}>
            Row {lines[s.row - 1] ?? s.row}: {skipReason(s.reasons)}
          </List.Item>
        ))}
      </List>
      {skipped.length > SHOWN && <Text size="sm">… and {count(skipped.length - SHOWN)} more in the download.</Text>}
    </Alert>
  );
}

/**
 * People handed over by another page (the lead search's "Enrich"), as a file of one header line and a row
 * a person; null when the page was opened directly.
 */
function handedOver(state: unknown): Upload | null {
  const given = (state as { enrichFile?: { name: string; headers: string[]; rows: Record<string, string>[] } } | null)
    ?.enrichFile;
  if (!given || given.rows.length === 0) return null;
  return { ...given, rows: given.rows.slice(0, MAX_ROWS), lines: given.rows.slice(0, MAX_ROWS).map((_, i) => i + 2) };
}

export default function Enrichment() {
  const location = useLocation();
  const [kindName, setKindName] = useState<KindName>('people');
  const [file, setFile] = useState<Upload | null>(() => handedOver(location.state));
  const [problem, setProblem] = useState<string | null>(null);
  const [mapping, setMapping] = useState<Record<string, string>>(() => {
    const given = handedOver(location.state);
    return given ? autoMap(given.headers, KINDS.people.synonyms) : {};
  });
  const [leads, enrichLeads] = useMutation(EnrichLeads);
  const [businesses, enrichBusinesses] = useMutation(EnrichLocalBusinesses);
  const kind: Kind = KINDS[kindName];

  const choose = (name: KindName) => {
    setKindName(name);
    if (file) setMapping(autoMap(file.headers, (KINDS[name] as Kind).synonyms));
  };
  const read = async (chosen: File | null) => {
    setFile(null);
    setProblem(null);
    if (!chosen) return;
    const csv = readCsv(await chosen.text());
    if (csv.rows.length === 0) return setProblem('The file has no rows under its header line.');
    if (csv.rows.length > MAX_ROWS)
      return setProblem(`The file has ${count(csv.rows.length)} rows; enrichment takes ${count(MAX_ROWS)} at most.`);
    setFile({ ...csv, name: chosen.name });
    setMapping(autoMap(csv.headers, kind.synonyms));
  };
  const rows = () =>
    (file?.rows ?? []).map((row) =>
      Object.fromEntries(
        kind.fields.flatMap(({ key }) => {
          const column = mapping[key];
          return column ? [[key, row[column]?.trim() || null]] : [];
        }),
      ),
    );
  const enrich = (preview: boolean) => {
    const fileName = preview ? undefined : file?.name;
    void (kindName === 'people'
      ? enrichLeads({ rows: rows() as LeadEnrichmentInput[], preview, fileName })
      : enrichBusinesses({ rows: rows() as LocalBusinessEnrichmentInput[], preview, fileName }));
  };

  const result = kindName === 'people' ? leads : businesses;
  const data = kindName === 'people' ? leads.data?.enrichLeads : businesses.data?.enrichLocalBusinesses;
  const answer: Answer | undefined = data && { ...data, sample: withFound(data.sample), rows: withFound(data.rows) };
  const previewing = result.fetching && result.operation?.variables.preview === true;
  const enriching = result.fetching && result.operation?.variables.preview === false;
  const mapped = kind.fields.some(({ key }) => mapping[key]);
  const lines = file?.lines ?? [];

  const download = (enriched: Enriched[]) => {
    if (!file) return;
    const reasons = new Map(answer?.skipped?.map((s) => [s.row, s.reasons]));
    saveCsv(
      enrichedName(file.name),
      enriched.map((row, i) => ({
        line: lines[i] ?? '',
        ...file.rows[i],
        ...resultColumns(kind, row, reasons.get(i + 1)),
      })),
    );
  };

  return (
    <Stack>
      <PageTitle title="Enrichment">
        Upload a CSV of up to 1,000 people or local businesses. Its columns are matched to what enrichment reads from
        their headers (change any that are wrong); preview the matches (masked, free), then enrich and download. Rows
        with nothing to match on are skipped and named by their line. Matches count against the daily enrichment
        allowance.
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
        onChange={(chosen) => void read(chosen)}
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
          <Fieldset legend="Columns">
            <Text size="sm" c="dimmed" mb="xs">
              {kindName === 'people'
                ? 'Each row needs an email, a LinkedIn URL, a mobile number, a company domain, ' +
                  'or a name with a company.'
                : 'Each row needs a phone, a business name with a city or postal code, or a website.'}{' '}
              Columns were chosen from the file’s headers.
            </Text>
            <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }}>
              {kind.fields.map(({ key, label }) => (
                <NativeSelect
                  key={key}
                  label={`${label} column`}
                  value={mapping[key] ?? ''}
                  onChange={(e) => setMapping({ ...mapping, [key]: e.currentTarget.value })}
                  data={[{ value: '', label: 'Not used' }, ...file.headers.filter(Boolean)]}
                />
              ))}
            </SimpleGrid>
          </Fieldset>
          {!mapped && (
            <Text size="sm" c="red.9" role="alert">
              Choose at least one column to match on.
            </Text>
          )}
          <Group>
            <Button variant="default" loading={previewing} disabled={!mapped} onClick={() => enrich(true)}>
              Preview matches
            </Button>
            <Button loading={enriching} disabled={!mapped} onClick={() => enrich(false)}>
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
          {answer.summary.skipped > 0 && ` · ${count(answer.summary.skipped)} skipped`}
          {answer.dailyAllowanceRemaining != null && ` · ${count(answer.dailyAllowanceRemaining)} matches left today`}
        </Text>
      )}
      {answer?.skipped && <Skipped skipped={answer.skipped} lines={lines} />}
      {answer?.preview && answer.sample && (
        <ResultTable kind={kind} rows={answer.sample} label="Preview of the matches (masked)" />
      )}
      {answer && !answer.preview && answer.rows && file && (
        <>
          <Group>
            <Button variant="light" onClick={() => download(answer.rows ?? [])}>
              Download enriched CSV
            </Button>
          </Group>
          <ResultTable kind={kind} rows={answer.rows} lines={lines} label={`Enriched rows (first ${SHOWN})`} />
        </>
      )}
      <EnrichmentHistory />
    </Stack>
  );
}
