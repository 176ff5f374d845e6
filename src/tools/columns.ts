/**
 * A result column's name and values for people (the console's tables): its declared `label`, else its
 * key in words (`company_linkedin_url` “Company LinkedIn URL”); its declared `values` words, if any.
 * The CSV header stays the key: programs read it.
 */
import type { Column } from './types.ts';

/** Words of keys written otherwise than in sentence case. */
const WORDS: Readonly<Record<string, string>> = {
  id: 'ID',
  url: 'URL',
  urls: 'URLs',
  dob: 'Date of birth',
  mx: 'MX',
  smtp: 'SMTP',
  sqft: 'sq ft',
  zip: 'ZIP',
  ebitda: 'EBITDA',
  usd: 'USD',
  vp: 'VP',
  linkedin: 'LinkedIn',
  tiktok: 'TikTok',
  youtube: 'YouTube',
  checkin: 'Check-in',
  checkout: 'Check-out',
  webmail: 'webmail',
};

/** A column's name for people: its `label`, else its key's words in sentence case. */
export function columnLabel(column: Pick<Column, 'key' | 'label'>): string {
  if (column.label) return column.label;
  const words = column.key.split(/[_\s]+/).filter(Boolean);
  const text = words.map((w, i) => WORDS[w] ?? (i === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}
