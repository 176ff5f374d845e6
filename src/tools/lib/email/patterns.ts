import { asciiLetters, type PersonName } from './names.ts';

type Build = (first: string, last: string) => string;

/**
 * Address patterns in order of how common they are in business mail, with that share as the prior
 * used when nothing is known about a domain.
 */
export const PATTERNS: readonly { name: string; build: Build; prior: number; needsLast: boolean }[] = [
  { name: 'first.last', build: (f, l) => `${f}.${l}`, prior: 0.35, needsLast: true },
  { name: 'flast', build: (f, l) => `${f[0]}${l}`, prior: 0.2, needsLast: true },
  { name: 'first', build: (f) => f, prior: 0.12, needsLast: false },
  { name: 'firstlast', build: (f, l) => `${f}${l}`, prior: 0.07, needsLast: true },
  { name: 'firstl', build: (f, l) => `${f}${l[0]}`, prior: 0.05, needsLast: true },
  { name: 'f.last', build: (f, l) => `${f[0]}.${l}`, prior: 0.04, needsLast: true },
  { name: 'first_last', build: (f, l) => `${f}_${l}`, prior: 0.04, needsLast: true },
  { name: 'last.first', build: (f, l) => `${l}.${f}`, prior: 0.03, needsLast: true },
  { name: 'lastf', build: (f, l) => `${l}${f[0]}`, prior: 0.02, needsLast: true },
  { name: 'last', build: (_, l) => l, prior: 0.02, needsLast: true },
  { name: 'first-last', build: (f, l) => `${f}-${l}`, prior: 0.02, needsLast: true },
  { name: 'lastfirst', build: (f, l) => `${l}${f}`, prior: 0.01, needsLast: true },
  { name: 'fl', build: (f, l) => `${f[0]}${l[0]}`, prior: 0.01, needsLast: true },
];

const byName = new Map(PATTERNS.map((p) => [p.name, p]));

/** The local part a pattern gives for a name; null when the pattern needs a last name it lacks. */
export function applyPattern(pattern: string, name: PersonName): string | null {
  const p = byName.get(pattern);
  if (!p) throw new Error(`unknown pattern ${pattern}`);
  if (p.needsLast && !name.last) return null;
  return p.build(name.first, name.last ?? '');
}

export interface LearnedPattern {
  pattern: string;
  /** Known addresses this pattern explains. */
  matches: number;
  /** Share of the known addresses it explains. */
  share: number;
}

/**
 * Which patterns a domain uses, from addresses known for named people there: each address counts for
 * every pattern that produces its local part (a trailing number, as in jane.doe2, is ignored).
 * Most matches first, ties in the usual order.
 */
export function learnPatterns(known: readonly { firstName: string; lastName: string; email: string | null }[]): {
  patterns: LearnedPattern[];
  sample: number;
} {
  const counts = new Map<string, number>();
  let sample = 0;
  for (const person of known) {
    if (!person.email) continue;
    const local = person.email.slice(0, person.email.lastIndexOf('@')).toLowerCase().replace(/\d+$/, '');
    const name = { first: asciiLetters(person.firstName), last: asciiLetters(person.lastName) || null };
    if (!name.first) continue;
    sample += 1;
    for (const p of PATTERNS)
      if (applyPattern(p.name, name) === local) counts.set(p.name, (counts.get(p.name) ?? 0) + 1);
  }
  const patterns = PATTERNS.flatMap((p) => {
    const matches = counts.get(p.name);
    return matches === undefined ? [] : [{ pattern: p.name, matches, share: sample > 0 ? matches / sample : 0 }];
  }).sort((a, b) => b.matches - a.matches);
  return { patterns, sample };
}

export interface Candidate {
  email: string;
  pattern: string;
  /** Why it ranks where it does. */
  source: 'catalog_person' | 'catalog_pattern' | 'default';
  /** 0–100: how likely this is the address when the server cannot tell (catch-all). */
  confidence: number;
}

/**
 * Addresses to try for a person at a domain, best first: the person's own address if the catalog
 * has it, then the patterns the domain is known to use, then the rest in the usual order.
 */
export function candidates(
  name: PersonName,
  domain: string,
  learned: { patterns: LearnedPattern[]; sample: number },
  knownAddress: string | null,
): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  const push = (c: Candidate) => {
    if (seen.has(c.email)) return;
    seen.add(c.email);
    out.push(c);
  };
  if (knownAddress)
    push({
      email: knownAddress.toLowerCase(),
      pattern: patternOf(name, knownAddress) ?? 'known',
      source: 'catalog_person',
      confidence: 90,
    });
  // Evidence from more addresses weighs more; three or more agreeing addresses count fully.
  const weight = Math.min(1, learned.sample / 3);
  for (const l of learned.patterns) {
    const local = applyPattern(l.pattern, name);
    if (local)
      push({
        email: `${local}@${domain}`,
        pattern: l.pattern,
        source: 'catalog_pattern',
        confidence: Math.round(Math.min(95, 40 + 50 * l.share * weight)),
      });
  }
  for (const p of PATTERNS) {
    const local = applyPattern(p.name, name);
    if (local)
      push({ email: `${local}@${domain}`, pattern: p.name, source: 'default', confidence: Math.round(p.prior * 100) });
  }
  return out;
}

/** The pattern an address follows for a name, if any. */
export function patternOf(name: PersonName, email: string): string | null {
  const local = email.slice(0, email.lastIndexOf('@')).toLowerCase().replace(/\d+$/, '');
  return PATTERNS.find((p) => applyPattern(p.name, name) === local)?.name ?? null;
}
