/** Abbreviations read as the words they stand for, on both sides of a comparison. */
const EXPANSIONS: Record<string, string[]> = {
  ceo: ['chief', 'executive', 'officer'],
  cto: ['chief', 'technology', 'officer'],
  cfo: ['chief', 'financial', 'officer'],
  coo: ['chief', 'operating', 'officer'],
  cmo: ['chief', 'marketing', 'officer'],
  cio: ['chief', 'information', 'officer'],
  cro: ['chief', 'revenue', 'officer'],
  cpo: ['chief', 'product', 'officer'],
  cso: ['chief', 'security', 'officer'],
  cdo: ['chief', 'data', 'officer'],
  chro: ['chief', 'human', 'resources', 'officer'],
  ciso: ['chief', 'information', 'security', 'officer'],
  vp: ['vice', 'president'],
  svp: ['senior', 'vice', 'president'],
  evp: ['executive', 'vice', 'president'],
  avp: ['assistant', 'vice', 'president'],
  md: ['managing', 'director'],
  gm: ['general', 'manager'],
  hr: ['human', 'resources'],
  it: ['information', 'technology'],
  pr: ['public', 'relations'],
  dir: ['director'],
  mgr: ['manager'],
  sr: ['senior'],
  snr: ['senior'],
  jr: ['junior'],
  eng: ['engineering'],
  mktg: ['marketing'],
  ops: ['operations'],
  acct: ['account'],
  exec: ['executive'],
  bizdev: ['business', 'development'],
  bd: ['business', 'development'],
};

const STOP = new Set(['of', 'the', 'and', 'for', 'in', 'at', 'a', 'an', 'to', 'on', 'with']);

/** Crude stemming so "engineering"/"engineer" and "operations"/"operation" compare equal. */
function stem(word: string): string {
  let w = word;
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  return w;
}

/** The words of a title, abbreviations expanded, stop words dropped, stemmed. */
export function titleTokens(title: string): string[] {
  const words = title
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/\bvice[\s-]+president\b/g, 'vice president')
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words
    .flatMap((w) => EXPANSIONS[w] ?? [w])
    .filter((w) => !STOP.has(w))
    .map(stem);
}

/**
 * Loose title match: every significant word of the wanted title appears in the person's title, once
 * abbreviations are expanded ("CEO" matches "Co-Founder & Chief Executive Officer", "VP Sales" matches
 * "Vice President of Sales", "Marketing Director" matches "Director of Digital Marketing").
 * Returns 0 for no match, else the share of the person's title the wanted words cover (1 = same title).
 */
export function matchTitle(wanted: string, title: string | null): number {
  if (!title) return 0;
  const want = titleTokens(wanted);
  const have = titleTokens(title);
  if (want.length === 0 || have.length === 0) return 0;
  const set = new Set(have);
  if (!want.every((w) => set.has(w))) return 0;
  return new Set(want).size / set.size;
}

const TITLE_WORDS = new Set(
  [
    'chief',
    'officer',
    'president',
    'vice',
    'director',
    'head',
    'manager',
    'lead',
    'founder',
    'owner',
    'partner',
    'principal',
    'chair',
    'chairman',
    'chairwoman',
    'board',
    'engineer',
    'developer',
    'designer',
    'architect',
    'scientist',
    'analyst',
    'consultant',
    'advisor',
    'adviser',
    'specialist',
    'coordinator',
    'associate',
    'executive',
    'representative',
    'counsel',
    'attorney',
    'accountant',
    'controller',
    'treasurer',
    'secretary',
    'administrator',
    'editor',
    'recruiter',
    'assistant',
    'intern',
    'strategist',
    'producer',
    'supervisor',
    'superintendent',
    'officer',
    'dean',
    'professor',
    'physician',
    'nurse',
    'dentist',
    'agent',
    'broker',
    'realtor',
    'sales',
    'marketing',
    'operations',
    'engineering',
    'finance',
    'product',
    'ceo',
    'cto',
    'cfo',
    'coo',
    'cmo',
    'cio',
    'cro',
    'cpo',
    'vp',
    'svp',
    'evp',
    'md',
    'gm',
    'hr',
    'founding',
    'cofounder',
    'president',
    'manager',
    'technician',
    'therapist',
    'lawyer',
  ].map(stem),
);

/** Whether a short line reads like a job title ("Head of Sales", "CTO", "Co-Founder"). */
export function looksLikeJobTitle(text: string): boolean {
  const words = text
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter(Boolean)
    .map(stem);
  return words.length > 0 && words.length <= 12 && words.some((w) => TITLE_WORDS.has(w));
}
