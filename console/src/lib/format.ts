import {
  AllowanceKindDescriptions,
  EnrichmentMatchStatusDescriptions,
  LedgerKindDescriptions,
  PipelineStatusDescriptions,
  PlanDescriptions,
  RoleDescriptions,
  RunStatusDescriptions,
  StatementLineKindDescriptions,
  SubscriptionStatusDescriptions,
  ToolDescriptions,
  WebhookDeliveryStatusDescriptions,
} from '../gql/enum-descriptions.ts';

/** Money as the API answers it (a decimal string of USD) for people: `$1,234.50`, `-$0.18`. */
export const usd = (amount: string | null | undefined) =>
  amount == null
    ? '—'
    : Number(amount).toLocaleString('en-US', {
        style: 'currency',
        currency: 'USD',
        minimumFractionDigits: 2,
        maximumFractionDigits: 4,
      });

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

const SPANS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** A time as people say it relative to now (“3 minutes ago”, “yesterday”); “just now” within a minute. */
export function ago(iso: string, now = Date.now()): string {
  const ms = new Date(iso).getTime() - now;
  for (const [unit, size] of SPANS) if (Math.abs(ms) >= size) return relative.format(Math.round(ms / size), unit);
  return 'just now';
}

export const count = (n: number) => n.toLocaleString('en-US');

/** A tool enum value (MAPS, LEAD_SCRAPER) as its registry name in URLs (maps, lead-scraper). */
export const toolSlug = (tool: string) => tool.toLowerCase().replace(/_/g, '-');
export const toolValue = (slug: string) => slug.toUpperCase().replace(/-/g, '_');

/** Money in a list: 2 decimals (`$4.90`); the exact amount (`usd`) goes in the cell's title or the detail. */
export const usd2 = (amount: string | null | undefined) =>
  amount == null ? '—' : Number(amount).toLocaleString('en-US', { style: 'currency', currency: 'USD' });

/** A length of time as people say it: “0.4 s”, “12 s”, “4 min 12 s”, “2 h 5 min”, “3 d 4 h”. */
export function duration(ms: number): string {
  if (ms < 10_000) return `${(Math.max(0, ms) / 1000).toLocaleString('en-US', { maximumFractionDigits: 1 })} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const [d, h, m] = [Math.floor(s / 86_400), Math.floor((s % 86_400) / 3600), Math.floor((s % 3600) / 60)];
  if (d > 0) return h ? `${d} d ${h} h` : `${d} d`;
  if (h > 0) return m ? `${h} h ${m} min` : `${h} h`;
  return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
}

/** An enum or data value in sentence case: `TIMED_OUT` “Timed out”, `c_suite` “C suite”. */
export const sentence = (value: string) => {
  const words = value.replace(/[_-]+/g, ' ').trim().toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * The words for an enum's values, one map an enum, derived from the schema's descriptions of them
 * (console/src/gql/enum-descriptions.ts): for enums whose descriptions start with a title (`titled`:
 * “Map-listing scraper: Local businesses…”) that title, else the value in sentence case; `overrides`
 * where a better word exists.
 * The description itself is the value's hint (`hintOf`).
 */
function wordsOf<V extends string>(
  descriptions: Readonly<Record<V, string>>,
  overrides: Partial<Record<V, string>> = {},
  { titled = false } = {},
): Readonly<Record<V, string>> {
  const words = {} as Record<V, string>;
  for (const value of Object.keys(descriptions) as V[]) {
    const title = titled ? /^([^:.`]{2,60}): /.exec(descriptions[value])?.[1] : undefined;
    words[value] = overrides[value] ?? title ?? sentence(value);
  }
  return words;
}

export const TOOL_WORDS = wordsOf(ToolDescriptions, {}, { titled: true });
export const RUN_STATUS_WORDS = wordsOf(RunStatusDescriptions, { READY: 'Waiting' });
export const PIPELINE_STATUS_WORDS = wordsOf(PipelineStatusDescriptions);
export const PLAN_WORDS = wordsOf(PlanDescriptions);
export const SUBSCRIPTION_STATUS_WORDS = wordsOf(SubscriptionStatusDescriptions);
export const ROLE_WORDS = wordsOf(RoleDescriptions);
export const LEDGER_KIND_WORDS = wordsOf(LedgerKindDescriptions, { PLAN_GRANT: 'Plan credits' });
export const STATEMENT_LINE_KIND_WORDS = wordsOf(StatementLineKindDescriptions, {
  PLAN_GRANT: 'Plan credits',
  PURCHASE: 'Credits bought',
});
export const ALLOWANCE_KIND_WORDS = wordsOf(AllowanceKindDescriptions, {
  DATABASE: 'Database records',
  ENRICHMENT: 'Enrichment matches',
});
export const ENRICHMENT_MATCH_WORDS = wordsOf(EnrichmentMatchStatusDescriptions);
export const WEBHOOK_DELIVERY_STATUS_WORDS = wordsOf(WebhookDeliveryStatusDescriptions, { SUCCEEDED: 'Delivered' });

/** What a run status means, for a badge's title: its schema description. */
export const RUN_STATUS_HINTS: Readonly<Record<string, string>> = RunStatusDescriptions;

/** A value through one of the maps above; an unknown value (a newer server's) in sentence case. */
export const word = (words: Readonly<Record<string, string>>, value: string | null | undefined) =>
  value == null ? '—' : (words[value] ?? sentence(value));
