import { distance } from 'fastest-levenshtein';

/** Trigrams of each word, padded like pg_trgm ("  p", " pl", …, "ng "), so word starts weigh more. */
function trigrams(text: string): Set<string> {
  const grams = new Set<string>();
  for (const word of text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)) {
    const padded = `  ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) grams.add(padded.slice(i, i + 3));
  }
  return grams;
}

/** Trigram similarity in [0, 1]: shared trigrams over all trigrams of both texts. */
export function trigramSimilarity(a: string, b: string): number {
  const ga = trigrams(a);
  const gb = trigrams(b);
  if (ga.size === 0 || gb.size === 0) return 0;
  let shared = 0;
  for (const g of ga) if (gb.has(g)) shared += 1;
  return shared / (ga.size + gb.size - shared);
}

/** Edits (insert, delete, substitute) that turn `a` into `b` (the Levenshtein distance). */
export const editDistance = (a: string, b: string): number => distance(a, b);

/**
 * The candidates closest to `text`, best first: by trigram similarity (whole words shared), then
 * by edit distance (typos in one word). Candidates that share nothing and need many edits are left out.
 */
export function closestMatches(text: string, candidates: readonly string[], max = 3): string[] {
  const query = text.trim().toLowerCase();
  const typo = (distance: number) => distance <= Math.max(2, Math.floor(query.length / 3));
  const ranked = candidates
    .map((candidate) => {
      const lower = candidate.toLowerCase();
      return { candidate, similarity: trigramSimilarity(query, lower), distance: editDistance(query, lower) };
    })
    .filter((m) => m.similarity >= 0.2 || typo(m.distance))
    .sort((x, y) => y.similarity - x.similarity || x.distance - y.distance || x.candidate.localeCompare(y.candidate));
  const best = ranked[0]?.similarity ?? 0;
  // Far weaker matches than the best one are noise ("painting" should not suggest "window-tinting").
  return ranked
    .filter((m) => m.similarity >= best * 0.7 || typo(m.distance))
    .slice(0, max)
    .map((m) => m.candidate);
}

/** "a", "b" or "c" — for "did you mean …?" messages. */
export function quotedAlternatives(values: string[]): string {
  const quoted = values.map((v) => `"${v}"`);
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}
