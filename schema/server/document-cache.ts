import type { DocumentNode } from 'graphql';
import { createLRUCache } from 'graphql-yoga';

/** Documents longer than this (UTF-16 units) are neither cached parsed nor registered as APQ. */
const MAX_CACHED_DOCUMENT = 32 * 1024;

/** An LRU that leaves out documents too long to be worth keeping (a 1 MB string literal is one token). */
export function boundedCache<T extends {}>(max: number) {
  const lru = createLRUCache<T>({ max, ttl: 24 * 3600_000 });
  return {
    get: (key: string) => lru.get(key),
    set: (key: string, value: T) => void (key.length <= MAX_CACHED_DOCUMENT && lru.set(key, value)),
  };
}

/**
 * yoga's `parserAndValidationCache`. The document's validation is cached per document; the complexity
 * check runs after it on every request (complexityAtStartPlugin), with the request's variables: only a
 * measure that cannot depend on them is remembered, per document, never a verdict.
 */
export function parserAndValidationCache() {
  return {
    documentCache: boundedCache<DocumentNode>(1000),
    errorCache: { get: () => undefined, set: () => {} },
    validationCache: true,
  };
}
