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
        if (!pass && !all) waiting.set(n, (pass = new Promise<void>((resolve) => gates.set(n, resolve))));
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
