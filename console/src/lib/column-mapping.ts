import Papa from 'papaparse';

/**
 * The enrichment page's column auto-mapping: which header of an uploaded CSV holds each input field,
 * read from one synonym table per kind of enrichment. Headers are compared in a compact form (lower
 * case, without spaces, underscores, hyphens or other punctuation), so "LinkedIn URL", "linkedin_url"
 * and "Linkedin-Url" are one header. Exact synonyms win; then a header containing a field's tell-tale
 * word ("Person Linkedin Url" holds "linkedin"). A header maps to one field at most.
 */

/** A header in the form compared: lower case letters and digits only. */
export const compact = (header: string) => header.toLowerCase().replace(/[^a-z0-9]/g, '');

interface Synonyms {
  /** Whole headers that mean the field, in order of preference. */
  exact: readonly string[];
  /** Words a header may contain to mean the field, tried after every exact synonym of every field. */
  contains?: readonly string[];
}

/** People (lead enrichment): the GraphQL input fields of LeadEnrichmentInput. */
export const PEOPLE_SYNONYMS = {
  email: {
    exact: [
      'email',
      'email address',
      'e-mail',
      'e-mail address',
      'work email',
      'business email',
      'contact email',
      'mail',
    ],
    contains: ['email'],
  },
  social: {
    exact: [
      'linkedin',
      'linkedin url',
      'linkedin profile',
      'linkedin profile url',
      'person linkedin url',
      'social',
      'social url',
      'social profile',
      'profile url',
    ],
    contains: ['linkedin'],
  },
  mobile: {
    exact: ['mobile', 'mobile phone', 'mobile number', 'cell', 'cell phone', 'cell number', 'phone mobile'],
    contains: ['mobile', 'cell'],
  },
  domain: {
    exact: ['domain', 'company domain', 'website', 'company website', 'website url', 'web site', 'url', 'company url'],
    contains: ['domain', 'website'],
  },
  fullName: { exact: ['full name', 'name', 'contact name', 'person name', 'contact'] },
  firstName: { exact: ['first name', 'given name', 'first'], contains: ['firstname'] },
  lastName: { exact: ['last name', 'surname', 'family name', 'last'], contains: ['lastname'] },
  companyName: {
    exact: ['company', 'company name', 'account name', 'organization', 'organisation', 'employer', 'account'],
    contains: ['company'],
  },
} as const satisfies Record<string, Synonyms>;

/** Local businesses: the GraphQL input fields of LocalBusinessEnrichmentInput. */
export const BUSINESS_SYNONYMS = {
  phone: {
    exact: ['phone', 'phone number', 'telephone', 'tel', 'business phone', 'main phone', 'company phone'],
    contains: ['phone'],
  },
  name: {
    exact: ['business name', 'name', 'company', 'company name', 'business', 'place name', 'place', 'account name'],
    contains: ['name'],
  },
  city: { exact: ['city', 'town', 'locality'], contains: ['city'] },
  postalCode: {
    exact: ['postal code', 'zip', 'zip code', 'postcode', 'post code', 'zipcode'],
    contains: ['zip', 'postal'],
  },
  state: { exact: ['state', 'province', 'region', 'state province', 'state code'] },
  country: { exact: ['country', 'country code', 'nation'], contains: ['country'] },
  website: {
    exact: ['website', 'domain', 'url', 'web site', 'website url', 'company website', 'company domain'],
    contains: ['website', 'domain'],
  },
} as const satisfies Record<string, Synonyms>;

/**
 * The header each field maps to ('' for none): every exact synonym first (fields in order, each taking its
 * most preferred synonym present), then the tell-tale words for the fields still without a column.
 */
export function autoMap<F extends string>(
  headers: readonly string[],
  synonyms: Record<F, Synonyms>,
): Record<F, string> {
  const fields = Object.keys(synonyms) as F[];
  const mapping = Object.fromEntries(fields.map((f) => [f, ''])) as Record<F, string>;
  const taken = new Set<string>();
  const byCompact = new Map<string, string>();
  for (const h of headers) if (!byCompact.has(compact(h))) byCompact.set(compact(h), h);
  for (const field of fields) {
    for (const synonym of synonyms[field].exact) {
      const header = byCompact.get(compact(synonym));
      if (header !== undefined && !taken.has(header)) {
        mapping[field] = header;
        taken.add(header);
        break;
      }
    }
  }
  for (const field of fields) {
    if (mapping[field]) continue;
    const header = headers.find(
      (h) => !taken.has(h) && (synonyms[field].contains ?? []).some((word) => compact(h).includes(word)),
    );
    if (header !== undefined) {
      mapping[field] = header;
      taken.add(header);
    }
  }
  return mapping;
}

/** A CSV file read: its headers and rows, each row with the file line it starts on (the header is line 1). */
export interface CsvFile {
  headers: string[];
  rows: Record<string, string>[];
  lines: number[];
}

/**
 * Reads CSV text with the line each record starts on (a quoted field may span lines; empty lines are
 * skipped but counted), so a row the API reports by its place can be named by its line in the file.
 */
export function readCsv(text: string): CsvFile {
  const records: { fields: string[]; line: number }[] = [];
  let counted = 0;
  let lineBreaks = 0;
  let start = 0;
  Papa.parse<string[]>(text, {
    header: false,
    skipEmptyLines: true,
    step: (result) => {
      // The record starts after the previous one's end and any empty lines.
      let from = start;
      while (text[from] === '\n' || text[from] === '\r') from += 1;
      for (; counted < from; counted += 1) if (text[counted] === '\n') lineBreaks += 1;
      records.push({ fields: result.data, line: lineBreaks + 1 });
      start = result.meta.cursor;
    },
  });
  const [head, ...body] = records;
  const headers = (head?.fields ?? []).map((h) => h.trim());
  return {
    headers,
    rows: body.map((r) => Object.fromEntries(headers.map((h, i) => [h, r.fields[i] ?? '']))),
    lines: body.map((r) => r.line),
  };
}
