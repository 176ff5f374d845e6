/**
 * Step links: how the rows of one tool's run become the input of another's, declared once beside the
 * tools. A pipeline (src/workflows/pipelines.ts) chains tools only through these links, the faces offer
 * a finished run's valid next steps from them, and a pipeline's joined table pairs each row of a step
 * with the rows the next step found for it through the link's `echo` column.
 */
import { companyDomain } from './lib/email/domains.ts';
import { MAX_INPUTS as MOBILE_FINDER_MAX } from './mobile-finder.ts';
import { MAX_CONTACTS_PER_DOMAIN, MAX_DOMAINS } from './website-finder.ts';
import { MAX_EMAILS } from './email-validator.ts';
import { getTool } from './index.ts';

export interface StepLink {
  /** The tool whose rows feed the link, and the column read from each row (text, or a list of texts). */
  from: string;
  column: string;
  /** The tool fed, and the field of its input the values fill (a list). */
  to: string;
  field: string;
  /** The column of the fed tool's rows that gives back the value each row was found for: the join. */
  echo: string;
  /** A cell's value as the fed tool takes it, or null when it is not one (an empty or malformed cell). */
  value(cell: string): string | null;
  /** Values read from one row at most (a list column's first ones). */
  perRow: number;
  /** The most values the fed tool takes in one run (its input's limit). */
  max: number;
  /** What the values are, in words ("domains", "email addresses"). */
  what: string;
  /** A value that stands for the real ones when the step's other fields are checked before any row exists. */
  sample: string;
  /** The link in one sentence, for every face. */
  description: string;
}

const email = (cell: string) => {
  const value = cell.trim();
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value) ? value : null;
};
const domain = (cell: string) => companyDomain(cell.trim());
const profile = (cell: string) => (/^https?:\/\/\S+$/i.test(cell.trim()) ? cell.trim() : null);

export const STEP_LINKS: readonly StepLink[] = [
  {
    from: 'maps',
    column: 'website',
    to: 'website-finder',
    field: 'domains',
    echo: 'domain',
    value: domain,
    perRow: 1,
    max: MAX_DOMAINS,
    what: 'domains',
    sample: 'example.com',
    description: 'Each place’s website, as its root domain, searched for contacts with the job title.',
  },
  {
    from: 'maps',
    column: 'emails',
    to: 'email-validator',
    field: 'emails',
    echo: 'email',
    value: email,
    perRow: 5,
    max: MAX_EMAILS,
    what: 'email addresses',
    sample: 'jane@example.com',
    description: 'Each place’s email addresses (its first five) validated.',
  },
  {
    from: 'website-finder',
    column: 'email',
    to: 'email-validator',
    field: 'emails',
    echo: 'email',
    value: email,
    perRow: 1,
    max: MAX_EMAILS,
    what: 'email addresses',
    sample: 'jane@example.com',
    description: 'Each contact’s email address validated.',
  },
  {
    from: 'website-finder',
    column: 'email',
    to: 'mobile-finder',
    field: 'inputs',
    echo: 'input',
    value: email,
    perRow: 1,
    max: MOBILE_FINDER_MAX,
    what: 'email addresses',
    sample: 'jane@example.com',
    description: 'A mobile number looked up for each contact’s email address.',
  },
  {
    from: 'lead-scraper',
    column: 'email',
    to: 'email-validator',
    field: 'emails',
    echo: 'email',
    value: email,
    perRow: 1,
    max: MAX_EMAILS,
    what: 'email addresses',
    sample: 'jane@example.com',
    description: 'Each lead’s work email validated.',
  },
  {
    from: 'lead-scraper',
    column: 'linkedin_url',
    to: 'mobile-finder',
    field: 'inputs',
    echo: 'input',
    value: profile,
    perRow: 1,
    max: MOBILE_FINDER_MAX,
    what: 'profile links',
    sample: 'https://www.linkedin.com/in/jane-doe',
    description: 'A mobile number looked up for each lead’s professional profile.',
  },
  {
    from: 'store-leads',
    column: 'domain',
    to: 'website-finder',
    field: 'domains',
    echo: 'domain',
    value: domain,
    perRow: 1,
    max: MAX_DOMAINS,
    what: 'domains',
    sample: 'example.com',
    description: 'Each store’s domain searched for contacts with the job title.',
  },
  {
    from: 'store-leads',
    column: 'emails',
    to: 'email-validator',
    field: 'emails',
    echo: 'email',
    value: email,
    perRow: 5,
    max: MAX_EMAILS,
    what: 'email addresses',
    sample: 'jane@example.com',
    description: 'Each store’s email addresses (its first five) validated.',
  },
];

/**
 * The most rows one requested item of a tool yields, where it is more than one (the domain email
 * finder: five contacts a domain); a pipeline's quote bounds each step by it.
 */
const ROWS_PER_ITEM: Record<string, number> = { 'website-finder': MAX_CONTACTS_PER_DOMAIN };
export const rowsPerItem = (tool: string) => ROWS_PER_ITEM[tool] ?? 1;

/** The links out of a tool's rows: its valid next steps. */
export const nextSteps = (tool: string): StepLink[] => STEP_LINKS.filter((link) => link.from === tool);

/** The link from `from` to `to`, through `column` when there are several; undefined when none. */
export function findLink(from: string, to: string, column?: string): StepLink | undefined {
  return STEP_LINKS.find((l) => l.from === from && l.to === to && (column === undefined || l.column === column));
}

/** The values a step's rows give the next one, in row order, each once (as the join compares them). */
export function linkValues(link: StepLink, rows: Iterable<Record<string, unknown>>): string[] {
  const seen = new Set<string>();
  const values: string[] = [];
  for (const row of rows)
    for (const value of cellValues(link, row)) {
      const key = joinKey(value);
      if (seen.has(key)) continue;
      seen.add(key);
      values.push(value);
    }
  return values;
}

/** The values one row gives through a link (at most `perRow`). */
export function cellValues(link: StepLink, row: Record<string, unknown>): string[] {
  const cell = row[link.column];
  const cells = Array.isArray(cell) ? cell : [cell];
  const values: string[] = [];
  for (const c of cells) {
    if (values.length >= link.perRow) break;
    if (typeof c !== 'string') continue;
    const value = link.value(c);
    if (value !== null) values.push(value);
  }
  return values;
}

/** How the join compares a value with a fed row's echo: case does not matter in domains and addresses. */
export const joinKey = (value: string) => value.trim().toLowerCase();

/** Every link names real tools and columns: checked when the registry loads in tests. */
export function checkLinks() {
  for (const link of STEP_LINKS) {
    const from = getTool(link.from);
    const to = getTool(link.to);
    if (!from.columns.some((c) => c.key === link.column)) throw new Error(`${link.from} has no column ${link.column}`);
    if (!to.columns.some((c) => c.key === link.echo)) throw new Error(`${link.to} has no column ${link.echo}`);
  }
}
