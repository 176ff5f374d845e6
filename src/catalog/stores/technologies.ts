/**
 * Technology names and the data periods of technology lookups. Technology data refreshes monthly,
 * store apps weekly (spec); a lookup is answered from its period's cache until the next refresh.
 */

/**
 * The form names are compared in: case, spacing and punctuation ignored ("Google Analytics",
 * "googleanalytics" and "google-analytics" are one name); "+" and "#" are kept ("C++" is not "C").
 */
export const technologyKey = (name: string) =>
  name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}+#]+/gu, '');

/** "2026-11": the monthly period `at` falls in (UTC). */
export function monthPeriod(at: Date): string {
  return `${at.getUTCFullYear()}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * "2026-W47": the ISO 8601 week `at` falls in (UTC); weeks start on Monday and belong to the year of their Thursday.
 */
export function isoWeekPeriod(at: Date): string {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  const weekday = day.getUTCDay() || 7;
  day.setUTCDate(day.getUTCDate() + 4 - weekday);
  const yearStart = Date.UTC(day.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((day.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${day.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}

/** Known names whose form contains the requested one or the reverse, for a "did you mean" hint. */
export function similarNames(requested: string, known: Iterable<string>, max = 5): string[] {
  const key = technologyKey(requested);
  if (key.length < 3) return [];
  const found = new Set<string>();
  for (const name of known) {
    const other = technologyKey(name);
    if (other.includes(key) || (other.length >= 3 && key.includes(other))) found.add(name);
  }
  return [...found].sort((a, b) => a.length - b.length || a.localeCompare(b)).slice(0, max);
}
