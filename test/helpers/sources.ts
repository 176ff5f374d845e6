import type { PlaceQuery, Sources } from '../../src/sources/types.ts';

export interface GatedSources {
  sources: Sources;
  /** Lets page `n` (from 0) through, now or when the runner asks for it. */
  release(n: number): void;
  /** Lets every page through, those asked for already and those to come. */
  releaseAll(): void;
  /** Resolves when the runner asks for page `n`. */
  reachedPage(n: number): Promise<void>;
}

/** `base` with a place search that pauses before each page until the test releases it. */
export function gatedSources(base: Sources): GatedSources {
  const gates = new Map<number, () => void>();
  const waiting = new Map<number, Promise<void>>();
  const reached: Array<(page: number) => void> = [];
  let page = 0;
  let all = false;
  const sources: Sources = {
    ...base,
    localBusinesses: {
      ...base.localBusinesses,
      searchPlaces: async (query: PlaceQuery) => {
        const n = page++;
        for (const notify of reached.splice(0)) notify(n);
        let pass = waiting.get(n);
        if (!pass && !all) {
          pass = new Promise<void>((resolve) => gates.set(n, resolve));
          waiting.set(n, pass);
        }
        await pass;
        return base.localBusinesses.searchPlaces(query);
      },
    },
  };
  const release = (n: number) => {
    if (!waiting.has(n)) waiting.set(n, Promise.resolve());
    gates.get(n)?.();
  };
  return {
    sources,
    release,
    releaseAll() {
      all = true;
      for (const n of gates.keys()) release(n);
    },
    async reachedPage(n) {
      while (page <= n) await new Promise<number>((resolve) => reached.push(resolve));
    },
  };
}

/**
 * Gates over the catalog of one app for a suite: `hold()` makes the runs started from then on wait
 * before each page of their place search until the test releases them; `reset()`, after each test,
 * lets every page through and puts the catalog back.
 */
export function runGates(core: { sources: Sources }) {
  const catalog = core.sources;
  let gate: GatedSources | undefined;
  return {
    hold(): GatedSources {
      gate = gatedSources(catalog);
      core.sources = gate.sources;
      return gate;
    },
    reset() {
      gate?.releaseAll();
      gate = undefined;
      core.sources = catalog;
    },
  };
}
export type RunGates = ReturnType<typeof runGates>;

export interface HoldingSources {
  sources: Sources;
  /** Resolves once reads for `n` different keys wait (the keys `hold` returned). */
  held(n?: number): Promise<void>;
  /** Lets every held read through, and every later one. */
  release(): void;
}

/**
 * `base` with each read of every source held until `release` when `hold` says so at its start:
 * `hold(source, method)` returns a key for what waits (a run, a tool), or undefined to let the read
 * through. Used to hold a run once it has stored rows, so a cancel lands between two of its batches.
 */
export function holdingSources(
  base: Sources,
  hold: (source: string, method: string) => Promise<string | undefined>,
): HoldingSources {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let isReleased = false;
  const waiting = new Set<string>();
  const watchers: { n: number; resolve: () => void }[] = [];
  const wrap = (name: string, source: object) =>
    new Proxy(source, {
      get(target, method, receiver) {
        const value = Reflect.get(target, method, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const key = isReleased ? undefined : await hold(name, String(method));
          if (key !== undefined) {
            waiting.add(key);
            for (const w of watchers.filter((w) => waiting.size >= w.n)) w.resolve();
            await released;
          }
          return value.apply(target, args);
        };
      },
    });
  return {
    sources: Object.fromEntries(
      Object.entries(base).map(([name, source]) => [name, wrap(name, source as object)]),
    ) as unknown as Sources,
    held: (n = 1) => new Promise<void>((resolve) => (waiting.size >= n ? resolve() : watchers.push({ n, resolve }))),
    release() {
      isReleased = true;
      release();
    },
  };
}
