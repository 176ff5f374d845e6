import type { ObjectFieldBuilder, OutputRef } from '@pothos/core';
import { EXACT_TOTAL_LIMIT } from '../src/catalog/sql.ts';
import { ValidationError } from '../src/shared/errors.ts';
import { isBigintText } from '../src/shared/params.ts';
import { builder } from './builder.ts';

/**
 * One connection shape for every list (the Relay Cursor Connections spec, as GitHub's API has it):
 * `XConnection { edges { cursor node } nodes pageInfo totalCount }`, one shared `PageInfo`, pages
 * forward only (`first`, `after`).
 */

export interface PageInfoShape {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export const PageInfoRef = builder.objectRef<PageInfoShape>('PageInfo').implement({
  description:
    'Where a page of a connection stands. Pages go forward only: ' +
    'ask for the next one with `after: endCursor` while `hasNextPage`.',
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage', { description: 'More items follow this page.' }),
    hasPreviousPage: t.exposeBoolean('hasPreviousPage', {
      description: 'Always false: connections page forward only (there is no `last`/`before`).',
    }),
    startCursor: t.exposeString('startCursor', {
      nullable: true,
      description: 'The cursor of the first edge; null when the page is empty.',
    }),
    endCursor: t.exposeString('endCursor', {
      nullable: true,
      description: 'The cursor of the last edge (pass it as `after`); null when the page is empty.',
    }),
  }),
});

/** A page of a connection as the resolvers answer it; `totalCount` may be computed only when asked for. */
export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: PageInfoShape;
  totalCount: number | (() => Promise<number>);
}

/** A page in the connection shape: `cursorOf` gives each item's cursor. */
export function connectionOf<T, X extends object = object>(
  items: readonly T[],
  page: { cursorOf: (item: T, index: number) => string; hasNextPage: boolean; totalCount: Connection<T>['totalCount'] },
  extra?: X,
): Connection<T> & X {
  const edges = items.map((node, i) => ({ cursor: page.cursorOf(node, i), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount: page.totalCount,
    ...(extra as X),
  };
}

/**
 * The `XConnection` and `XEdge` types of `node`, named after `name` (`Run` → `RunConnection`,
 * `RunEdge`). `fields` adds fields of the whole list (the lead search's daily allowance).
 */
export function connectionType<T, X extends object = object>(
  name: string,
  node: OutputRef<T>,
  options: {
    description: string;
    totalCount: string;
    /**
     * The list is a database search, whose size past the exact-count limit is estimated: adds `totalCountIsEstimate`.
     */
    totalCountMayBeEstimate?: boolean;
    fields?: (t: ObjectFieldBuilder<typeof builder.$inferSchemaTypes, Connection<T> & X>) => Record<string, unknown>;
  },
) {
  const edge = builder.objectRef<{ cursor: string; node: T }>(`${name}Edge`).implement({
    description: `An item of a ${name}Connection with its cursor.`,
    fields: (t) => ({
      cursor: t.exposeString('cursor', {
        description: 'Where this item stands; pass it as `after` for the items after it. Opaque.',
      }),
      node: t.field({ type: node as never, description: 'The item.', resolve: (e) => e.node as never }),
    }),
  });
  return builder.objectRef<Connection<T> & X>(`${name}Connection`).implement({
    description: options.description,
    fields: (t) => ({
      edges: t.field({
        type: [edge],
        description: 'The items of this page with their cursors.',
        resolve: (c) => c.edges,
      }),
      nodes: t.field({
        type: [node as never],
        description: 'The items of this page, without cursors.',
        resolve: (c) => c.edges.map((e) => e.node) as never,
      }),
      pageInfo: t.field({
        type: PageInfoRef,
        description: 'Where this page stands, to ask for the next one.',
        resolve: (c) => c.pageInfo,
      }),
      totalCount: t.int({
        description: options.totalCount,
        resolve: (c) => (typeof c.totalCount === 'function' ? c.totalCount() : c.totalCount),
      }),
      ...(options.totalCountMayBeEstimate
        ? {
            totalCountIsEstimate: t.boolean({
              description:
                `True when more matched than the exact-count limit (${EXACT_TOTAL_LIMIT.toLocaleString('en-US')} ` +
                `by default): \`totalCount\` is then an estimate from a sample, to two significant digits.`,
              resolve: (c) => (c as { totalCountIsEstimate?: boolean }).totalCountIsEstimate === true,
            }),
          }
        : {}),
      ...(options.fields?.(t) as object),
    }),
  });
}

export const FIRST_DESCRIPTION = (max: number, byDefault: number) =>
  `How many items to return, 1 to ${max}; default ${byDefault}.`;
export const AFTER_DESCRIPTION =
  'Return the items after this cursor (an `endCursor` or edge `cursor` of an earlier page).';

/** The page size asked for: `first`, or the default; 400 `validation_failed` outside 1..max. */
export function pageSize(first: number | null | undefined, options: { max: number; byDefault: number }): number {
  const size = first ?? options.byDefault;
  if (!Number.isInteger(size) || size < 1 || size > options.max)
    throw new ValidationError([{ path: 'first', message: `must be between 1 and ${options.max}` }]);
  return size;
}

/** 400 `validation_failed` on `after`: the cursor is not one this API returned. */
export const notACursor = () => new ValidationError([{ path: 'after', message: 'not a cursor returned by this API' }]);

/**
 * The id an id cursor stands for (`after` of a connection keyed by a bigint id, such as the ledger's),
 * or undefined when none was sent; 400 for anything but a decimal that fits a Postgres `bigint`.
 */
export function bigintCursor(after: string | null | undefined): bigint | undefined {
  if (!after) return undefined;
  if (!isBigintText(after)) throw notACursor();
  return BigInt(after);
}
