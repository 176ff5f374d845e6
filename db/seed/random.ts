/** Deterministic PRNG (mulberry32): the same seed gives the same catalog on every machine. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** One of `items` (none of which is undefined); an empty list is a mistake in the generator. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('a pick from an empty list');
    return item;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  id(length: number): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.next() * 62)];
    return out;
  }
}

/** Weighted choice over `[value, weight]` pairs. */
export function weighted<T>(rng: Random, items: readonly (readonly [T, number])[]): T {
  const total = items.reduce((sum, [, w]) => sum + w, 0);
  let x = rng.next() * total;
  for (const [value, w] of items) {
    x -= w;
    if (x < 0) return value;
  }
  const last = items.at(-1);
  if (!last) throw new Error('a weighted choice from an empty list');
  return last[0];
}

/** `count` distinct items of `items`, in draw order. */
export function sample<T>(rng: Random, items: readonly T[], count: number): T[] {
  const pool = [...items];
  const n = Math.min(count, pool.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(rng.next() * (pool.length - i));
    const [a, b] = [pool[i], pool[j]];
    if (a !== undefined && b !== undefined) [pool[i], pool[j]] = [b, a];
  }
  return pool.slice(0, n);
}

/** Rounds to `digits` decimals without float noise in the text form. */
export const fixed = (value: number, digits: number) => Number(value.toFixed(digits));

const DAY_MS = 86_400_000;
/** A YYYY-MM-DD date between two dates (inclusive), from integer day arithmetic. */
export function dateBetween(rng: Random, from: string, to: string): string {
  const start = Date.parse(`${from}T00:00:00Z`) / DAY_MS;
  const end = Date.parse(`${to}T00:00:00Z`) / DAY_MS;
  return new Date(rng.int(start, end) * DAY_MS).toISOString().slice(0, 10);
}

export const slugify = (text: string) =>
  text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, 'and')
    .replace(/[^a-z0-9]+/g, '');

export const kebab = (text: string) =>
  text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, 'and')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** Unique names: the first use of a base keeps it, later ones get 2, 3, … (constant time per name). */
export class UniqueNames {
  private readonly next = new Map<string, number>();
  private readonly taken = new Set<string>();

  take(base: string, format: (base: string, n: number) => string): string {
    let n = this.next.get(base) ?? 1;
    let name = n === 1 ? format(base, 0) : format(base, n);
    while (this.taken.has(name)) name = format(base, ++n);
    this.next.set(base, n + 1);
    this.taken.add(name);
    return name;
  }
}
