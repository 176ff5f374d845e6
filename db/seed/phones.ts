import type { City } from './reference.ts';
import type { Random } from './random.ts';

const CALLING_CODES: Record<string, string> = {
  US: '1',
  CA: '1',
  GB: '44',
  DE: '49',
  FR: '33',
  NL: '31',
  AU: '61',
  AE: '971',
  SG: '65',
};

const digits = (rng: Random, n: number) => String(rng.int(10 ** (n - 1), 10 ** n - 1));

/** A phone number in the city's numbering plan, e.g. "+1 303-555-0147" or "+44 20 7946 0958". */
export function phoneIn(rng: Random, city: City): string {
  const code = CALLING_CODES[city.countryCode] ?? '1';
  if (code === '1') return `+1 ${city.area}-${digits(rng, 3)}-${digits(rng, 4)}`;
  return `+${code} ${city.area} ${digits(rng, 4)} ${digits(rng, 4)}`;
}
