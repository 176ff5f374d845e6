import { z } from 'zod';
import type { PropertyAddress, PropertySelector, PropertySource } from '../../../sources/properties.ts';
import type { RunBatch } from '../../types.ts';
import { canonicalAddress, parseAddress, type ParsedAddress } from './address.ts';
import { matchAddresses, NOT_FOUND, type MatchType } from './match.ts';

/** Addresses per request, as the enrichment tools' 1,000 rows. */
export const MAX_ADDRESSES = 1_000;
/** Addresses matched per batch of result rows. */
const BATCH = 100;

const address = z
  .string()
  .trim()
  .min(1, 'an address must not be empty')
  .max(300, 'an address must be at most 300 characters')
  .superRefine((value, ctx) => {
    const parsed = parseAddress(value);
    if ('error' in parsed) ctx.addIssue({ code: 'custom', message: parsed.error });
  });

/** The `addresses` parameter of property lookup and its owner-contact run. */
export const addressList = z
  .array(address, { error: 'addresses must be a list of US addresses' })
  .min(1, 'give at least one address')
  .max(MAX_ADDRESSES, `at most ${MAX_ADDRESSES} addresses per request`)
  .describe(
    'US addresses, e.g. "1234 Main St, Denver, CO 80202"; full address with city, state and zip gives best results.',
  );

/** Reads an address the input schema has already accepted. */
const parsed = (text: string) => parseAddress(text) as ParsedAddress;

/** The addresses without repeats of the same normalised address (the first spelling is kept). */
export function uniqueAddresses(addresses: string[]): { addresses: string[]; duplicates: number } {
  const seen = new Set<string>();
  const unique = addresses.filter((a) => {
    const key = canonicalAddress(parsed(a));
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { addresses: unique, duplicates: addresses.length - unique.length };
}

/** One looked-up address, as a result row is built from it. */
export type LookupResult<T> =
  | { status: 'found'; matchType: MatchType; property: T }
  | { status: 'not_found' | 'ambiguous' | 'duplicate'; message: string };

export const formatAddress = (p: PropertyAddress) => `${p.street}, ${p.city}, ${p.state} ${p.zip}`;

/** The address columns every lookup row starts with. */
export function addressCells(input: string, result: LookupResult<PropertyAddress>) {
  const p = result.status === 'found' ? result.property : null;
  return {
    input_address: input,
    status: result.status,
    match_type: result.status === 'found' ? result.matchType : null,
    address: p ? formatAddress(p) : null,
    street: p?.street ?? null,
    city: p?.city ?? null,
    state: p?.state ?? null,
    zip: p?.zip ?? null,
  };
}

/**
 * Looks the addresses up in batches, in order, yielding one row per address. A property found
 * again through another spelling is a `duplicate` row pointing at the first one. Deterministic for
 * the same addresses and catalog, so a replayed attempt yields the same rows.
 */
export async function* lookUpAddresses<T extends PropertyAddress>(options: {
  addresses: string[];
  source: PropertySource;
  load: (select: PropertySelector) => Promise<T[]>;
  toRow: (input: string, result: LookupResult<T>) => Record<string, unknown>;
  signal: AbortSignal;
}): AsyncGenerator<RunBatch> {
  const { addresses, source, load, toRow, signal } = options;
  const firstSeen = new Map<number, number>();
  let found = 0;
  for (let start = 0; start < addresses.length && !signal.aborted; start += BATCH) {
    const chunk = addresses.slice(start, start + BATCH);
    const matches = await matchAddresses(source, chunk.map(parsed), load);
    const rows = chunk.map((input, i): Record<string, unknown> => {
      const match = matches[i] ?? NOT_FOUND;
      if (match.status !== 'found') return toRow(input, match);
      const earlier = firstSeen.get(match.property.id);
      if (earlier !== undefined) {
        return toRow(input, {
          status: 'duplicate',
          message: `Same property as address ${earlier + 1} (${addresses[earlier]}); returned and billed once`,
        });
      }
      firstSeen.set(match.property.id, start + i);
      found += 1;
      return toRow(input, match);
    });
    const done = start + chunk.length;
    yield {
      rows,
      message: `${done} of ${addresses.length} address${addresses.length === 1 ? '' : 'es'} looked up, ${found} found`,
      last: done >= addresses.length,
    };
  }
}
