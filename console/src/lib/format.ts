/** Money as the API answers it (a decimal string of USD) for people. */
export const usd = (amount: string | null | undefined) =>
  amount == null
    ? '—'
    : `$${Number(amount).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 })}`;

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

export const count = (n: number) => n.toLocaleString('en-US');

/** A tool enum value (MAPS, LEAD_SCRAPER) as its registry name in URLs (maps, lead-scraper). */
export const toolSlug = (tool: string) => tool.toLowerCase().replace(/_/g, '-');
export const toolValue = (slug: string) => slug.toUpperCase().replace(/-/g, '_');
