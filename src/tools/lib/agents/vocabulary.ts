import { AGENT_SPECIALTIES, LANGUAGES } from '../../../../db/seed/reference.ts';
import { closestMatches, quotedAlternatives } from '../home-services/similarity.ts';

/** Specialty codes and names, as the agent catalog stores them (codes in `specialties`). */
export const SPECIALTY_NAMES: ReadonlyMap<string, string> = new Map(AGENT_SPECIALTIES);

/** Languages agents list, as the catalog spells them. */
export const AGENT_LANGUAGES: readonly string[] = LANGUAGES;

/** "Buyer's Agent", "buyers agent" → "buyers agent". */
const nameKey = (text: string) =>
  text
    .toLowerCase()
    .replace(/['’]/g, '')
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

const CODE_BY_NAME = new Map(AGENT_SPECIALTIES.map(([code, name]) => [nameKey(name), code]));
const LANGUAGE_BY_LOWER = new Map(LANGUAGES.map((l) => [l.toLowerCase(), l]));

/** "1001", "Buyer's agent" or "buyers agent" → "1001"; undefined when neither a code nor a name. */
export function specialtyCode(text: string): string | undefined {
  const value = text.trim();
  if (SPECIALTY_NAMES.has(value)) return value;
  return CODE_BY_NAME.get(nameKey(value));
}

/** Why `text` is not a specialty, with the closest ones by name. */
export function unknownSpecialtyMessage(text: string): string {
  const value = text.trim();
  const codes = [...SPECIALTY_NAMES.keys()];
  const range =
    `codes run from ${codes[0]} to ${codes.at(-1)} (1001 buyer's agent, ` +
    '1002 listing agent; all are listed in docs/tools.md)';
  if (/^\d+$/.test(value)) return `"${value}" is not a specialty code; ${range}`;
  const close = closestMatches(value, [...SPECIALTY_NAMES.values()]).map(
    (name) => `${CODE_BY_NAME.get(nameKey(name))} (${name})`,
  );
  return close.length > 0
    ? `"${value}" is not a specialty; did you mean ${close.join(', ')}?`
    : `"${value}" is not a specialty; ${range}`;
}

/** "spanish" → "Spanish"; undefined when the catalog knows no such language. */
export const languageName = (text: string): string | undefined =>
  LANGUAGE_BY_LOWER.get(text.trim().toLowerCase().replace(/\s+/g, ' '));

/** Why `text` is not a language, with the closest ones. */
export function unknownLanguageMessage(text: string): string {
  const close = closestMatches(text, AGENT_LANGUAGES);
  const head = `"${text.trim()}" is not one of the ${AGENT_LANGUAGES.length} languages agents list`;
  return close.length > 0 ? `${head}; did you mean ${quotedAlternatives(close)}?` : `${head} (see docs/tools.md)`;
}
