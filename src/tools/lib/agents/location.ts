import type { AgentLocation } from '../../../sources/agents.ts';
import { parsePlace, stateAbbreviation } from '../../../shared/geo.ts';

const HINT = 'give a city and state ("Denver, CO" or "Denver, Colorado") or a 5-digit ZIP code ("80202")';

/** "Denver CO", "Salt Lake City Utah": the last one or two words as the state when there is no comma. */
function cityStateWithoutComma(text: string): AgentLocation | undefined {
  const words = text.trim().split(/\s+/);
  for (const n of [2, 1]) {
    if (words.length <= n) continue;
    const state = stateAbbreviation(words.slice(-n).join(' '));
    if (state) return { kind: 'city', city: words.slice(0, -n).join(' '), state };
  }
  return undefined;
}

/**
 * Reads the agents search location: a ZIP code (alone or after a city and state; it then decides)
 * or a city with its state. Returns a message saying what to send when it is neither.
 */
export function parseAgentLocation(text: string): AgentLocation | { error: string } {
  const area = parsePlace(text);
  if (area.kind === 'place') {
    if (area.postalCode) return { kind: 'zip', zip: area.postalCode };
    if (area.city && area.state) return { kind: 'city', city: area.city, state: area.state };
    if (area.city && !text.includes(',')) {
      const spaced = cityStateWithoutComma(area.city);
      if (spaced) return spaced;
    }
    if (area.state && !area.city) return { error: `a state alone is too wide; ${HINT}` };
    if (area.city) return { error: `"${area.city}" has no state; ${HINT}` };
  }
  return { error: HINT };
}

/** "Denver, CO" or "ZIP 80202", for messages. */
export const describeAgentLocation = (location: AgentLocation) =>
  location.kind === 'zip' ? `ZIP ${location.zip}` : `${location.city}, ${location.state}`;
