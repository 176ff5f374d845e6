import { csvOf } from './lib/csv.ts';
import { BUSINESS_SYNONYMS, PEOPLE_SYNONYMS } from './lib/column-mapping.ts';

/**
 * What the enrichment page enriches, shared by the page and its history: the API's input fields (each
 * read from a column of the uploaded file, auto-mapped by lib/column-mapping.ts), the columns of the
 * result table, and the prefix of the found fields in a downloaded CSV.
 */
export interface Kind {
  label: string;
  /** The job kind the history names it by. */
  job: 'LEADS' | 'LOCAL_BUSINESSES';
  fields: { key: string; label: string }[];
  synonyms: Record<string, { exact: readonly string[]; contains?: readonly string[] }>;
  columns: { field: string; header: string }[];
  prefix: string;
}

export const KINDS = {
  people: {
    label: 'People',
    job: 'LEADS',
    fields: [
      { key: 'email', label: 'Email' },
      { key: 'social', label: 'LinkedIn URL' },
      { key: 'mobile', label: 'Mobile number' },
      { key: 'domain', label: 'Company domain' },
      { key: 'fullName', label: 'Full name' },
      { key: 'firstName', label: 'First name' },
      { key: 'lastName', label: 'Last name' },
      { key: 'companyName', label: 'Company name' },
    ],
    synonyms: PEOPLE_SYNONYMS,
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
    job: 'LOCAL_BUSINESSES',
    fields: [
      { key: 'phone', label: 'Phone' },
      { key: 'name', label: 'Business name' },
      { key: 'city', label: 'City' },
      { key: 'postalCode', label: 'Postal code' },
      { key: 'state', label: 'State' },
      { key: 'country', label: 'Country' },
      { key: 'website', label: 'Website' },
    ],
    synonyms: BUSINESS_SYNONYMS,
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
export type KindName = keyof typeof KINDS;

/** The kind of a history job. */
export const kindOfJob = (job: string): Kind => (job === 'LEADS' ? KINDS.people : KINDS.businesses);

/** A row of either mutation (or of a job) with what was found (a lead, a business) as `found`. */
export interface Enriched {
  matchStatus: string;
  matchedBy?: string | null;
  found: Record<string, unknown> | null | undefined;
}

export const withFound = (
  rows:
    | readonly { matchStatus: string; matchedBy?: string | null; lead?: object | null; business?: object | null }[]
    | null
    | undefined,
): Enriched[] | undefined =>
  rows?.map(({ lead, business, ...row }) => ({
    ...row,
    found: (lead ?? business) as Record<string, unknown> | null | undefined,
  }));

/** A found field as a cell or CSV value (lists such as a business's emails joined). */
export const text = (value: unknown) => (Array.isArray(value) ? value.join('; ') : value == null ? '' : String(value));

/** Why a skipped row was skipped, in one sentence: the summary, then the values that could not be used. */
export const skipReason = (reasons: readonly string[]) => {
  const summary = reasons.at(-1) ?? '';
  const values = reasons.slice(0, -1);
  return values.length > 0 ? `${summary} (${values.join('; ')})` : summary;
};

/** The columns a row adds to a downloaded CSV: its status, match key, skip reason and what was found. */
export const resultColumns = (kind: Kind, row: Enriched, reasons: readonly string[] | undefined) => ({
  match_status: row.matchStatus.toLowerCase(),
  matched_by: row.matchedBy?.toLowerCase() ?? '',
  skip_reason: reasons ? skipReason(reasons) : '',
  // urql's __typename is not a field of the result.
  ...Object.fromEntries(
    Object.entries(row.found ?? {})
      .filter(([k]) => k !== '__typename')
      .map(([k, v]) => [`${kind.prefix}_${k}`, text(v)]),
  ),
});

/** Saves rows as a CSV file in the browser, with every column any row has (empty where a row has none). */
export function saveCsv(fileName: string, rows: Record<string, unknown>[]) {
  const keys = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const uniform = rows.map((row) => Object.fromEntries(keys.map((k) => [k, row[k] ?? ''])));
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([csvOf(uniform)], { type: 'text/csv' }));
  link.download = fileName;
  link.click();
  URL.revokeObjectURL(link.href);
}

/** The name of an enriched file's download: `people.csv` → `people-enriched.csv`. */
export const enrichedName = (fileName: string) => `${fileName.replace(/\.csv$/i, '')}-enriched.csv`;
