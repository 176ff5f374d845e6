import type {
  AddressCandidateQuery,
  PropertyAddress,
  PropertySelector,
  PropertySource,
} from '../../../sources/properties.ts';
import { exactKeys, normalizeStreet, type ParsedAddress } from './address.ts';

/** How an address found its property: the whole normalised address, or the street with the zip or with the city. */
export type MatchType = 'exact' | 'street_and_zip' | 'street_and_city';

export type AddressMatch<T> =
  | { status: 'found'; matchType: MatchType; property: T }
  | { status: 'not_found' | 'ambiguous'; message: string };

/** Candidates read per partial address; more than one matching street is ambiguous anyway. */
const CANDIDATE_LIMIT = 200;

/**
 * Which candidates are this street: the same number, directionals, name and suffix; with a unit
 * given, that unit (or a property without units at that street address).
 */
function sameStreet(address: ParsedAddress, candidates: PropertyAddress[]): PropertyAddress[] {
  const same = candidates.filter((c) => normalizeStreet(c.street)?.primary === address.street.primary);
  if (!address.street.unit) return same;
  const unit = same.filter((c) => normalizeStreet(c.street)?.unit === address.street.unit);
  return unit.length > 0 ? unit : same.filter((c) => !normalizeStreet(c.street)?.unit);
}

function ambiguity(matches: PropertyAddress[]): string {
  const zips = [...new Set(matches.map((m) => m.zip))].sort();
  const hint = zips.length > 1 ? `zip codes ${zips.join(', ')}; add the zip code` : 'add the unit number';
  return `${matches.length} properties match this address (${hint})`;
}

type Resolved =
  | { status: 'found'; matchType: MatchType; id: number }
  | { status: 'not_found' | 'ambiguous'; message: string };

export const NOT_FOUND = { status: 'not_found', message: 'No property at this address in the catalog' } as const;

/**
 * Resolves partial addresses step by step, all addresses of a step in one source call: the street
 * within the zip code, then within the city (and state). One fitting property is a match; several
 * are ambiguous; none moves the address to the next step.
 */
async function partialMatches(source: PropertySource, addresses: ParsedAddress[]): Promise<Resolved[]> {
  const results: Resolved[] = addresses.map(() => NOT_FOUND);
  const steps: {
    matchType: MatchType;
    area: (a: ParsedAddress) => Omit<AddressCandidateQuery, 'houseNumber'> | null;
  }[] = [
    { matchType: 'street_and_zip', area: (a) => (a.zip ? { zip: a.zip } : null) },
    { matchType: 'street_and_city', area: (a) => (a.city ? { city: a.city, state: a.state ?? undefined } : null) },
  ];
  let open = addresses.map((address, i) => ({ i, address }));
  for (const step of steps) {
    const asked = open.flatMap(({ i, address }) => {
      const area = step.area(address);
      return area ? [{ i, address, query: { houseNumber: address.street.number, ...area } }] : [];
    });
    if (asked.length === 0) continue;
    const candidates = await source.addressCandidates(
      asked.map((a) => a.query),
      CANDIDATE_LIMIT,
    );
    const settled = new Set<number>();
    for (const [k, { i, address }] of asked.entries()) {
      const matches = sameStreet(address, candidates[k] ?? []);
      const [only] = matches;
      if (!only) continue;
      results[i] =
        matches.length === 1
          ? { status: 'found', matchType: step.matchType, id: only.id }
          : { status: 'ambiguous', message: ambiguity(matches) };
      settled.add(i);
    }
    open = open.filter(({ i }) => !settled.has(i));
  }
  return results;
}

/**
 * Matches addresses to catalog properties, one result per address in order: first by the exact
 * normalised address key, then by the street within the zip code, then by the street within the
 * city (and state). A partial address that fits several properties is ambiguous, never guessed.
 * `load` reads the wanted record (details or owner contact) of the matched properties.
 */
export async function matchAddresses<T extends PropertyAddress>(
  source: PropertySource,
  addresses: ParsedAddress[],
  load: (select: PropertySelector) => Promise<T[]>,
): Promise<AddressMatch<T>[]> {
  const keysOf = addresses.map(exactKeys);
  const byKey = new Map((await load({ keys: [...new Set(keysOf.flat())] })).map((r) => [r.addressKey, r]));
  const exact = keysOf.map((keys) => keys.map((k) => byKey.get(k)).find((r) => r !== undefined));
  const unmatched = addresses.flatMap((address, i) => (exact[i] ? [] : [{ i, address }]));
  const partial = await partialMatches(
    source,
    unmatched.map((u) => u.address),
  );
  const resolved = new Map(unmatched.map(({ i }, k) => [i, partial[k] ?? NOT_FOUND]));
  const ids = partial.flatMap((r) => (r.status === 'found' ? [r.id] : []));
  const byId = new Map((ids.length > 0 ? await load({ ids }) : []).map((r) => [r.id, r]));
  return addresses.map((_, i): AddressMatch<T> => {
    const property = exact[i];
    if (property) return { status: 'found', matchType: 'exact', property };
    const r = resolved.get(i) ?? NOT_FOUND;
    if (r.status !== 'found') return r;
    const found = byId.get(r.id);
    return found ? { status: 'found', matchType: r.matchType, property: found } : NOT_FOUND;
  });
}
