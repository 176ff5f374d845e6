/** Money as the API answers it (a decimal string of USD) for people. */
export const usd = (amount: string | null | undefined) =>
  amount == null
    ? '—'
    : `$${Number(amount).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 })}`;

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
  for (const [unit, size] of SPANS) if (Math.abs(ms) >= size) return relative.format(Math.trunc(ms / size), unit);
  return 'just now';
}

export const count = (n: number) => n.toLocaleString('en-US');

/** A tool enum value (MAPS, LEAD_SCRAPER) as its registry name in URLs (maps, lead-scraper). */
export const toolSlug = (tool: string) => tool.toLowerCase().replace(/_/g, '-');
export const toolValue = (slug: string) => slug.toUpperCase().replace(/-/g, '_');
