import { once } from 'node:events';
import type { Sql } from '../client.ts';
import { addForeignKeys, dropForeignKeys } from '../import/indexes.ts';

/** A jsonb value (arrays of strings are otherwise written as text[]). */
export class Json {
  constructor(readonly value: unknown) {}
}
export const json = (value: unknown) => new Json(value);

/** A value as the generator produces it; written in COPY's text format. */
export type Cell = string | number | boolean | null | undefined | readonly string[] | Json;

const COPY_SPECIAL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const escapeText = (text: string) => text.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c] ?? c);
const arrayItem = (item: string) => `"${item.replace(/["\\]/g, (c) => `\\${c}`)}"`;

export function encodeCell(value: Cell): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') return escapeText(value);
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (value instanceof Json) return escapeText(JSON.stringify(value.value));
  return escapeText(`{${(value as readonly string[]).map(arrayItem).join(',')}}`);
}

const CHUNK_ROWS = 2000;

/** Streams rows into `table` with COPY; returns the number of rows written. */
export async function copyRows(
  sql: Sql,
  table: string,
  columns: readonly string[],
  rows: Iterable<Cell[]>,
  onRows?: (count: number) => void,
): Promise<number> {
  const writable = await sql`copy ${sql(table)} (${sql(columns as string[])}) from stdin`.writable();
  // The server can refuse rows at any time (a constraint, a bad value); keep the first error.
  let failure: Error | undefined;
  writable.on('error', (err: Error) => (failure ??= err));
  let chunk = '';
  let inChunk = 0;
  let total = 0;
  const flush = async () => {
    if (failure) throw failure;
    if (!writable.write(chunk)) await once(writable, 'drain');
    onRows?.(inChunk);
    chunk = '';
    inChunk = 0;
  };
  try {
    for (const row of rows) {
      chunk += `${row.map(encodeCell).join('\t')}\n`;
      inChunk += 1;
      total += 1;
      if (inChunk === CHUNK_ROWS) await flush();
    }
    if (inChunk > 0) await flush();
  } catch (err) {
    // Ends the COPY with an error, so the server rolls it back instead of waiting for more rows.
    writable.destroy(err as Error);
    throw err;
  }
  writable.end();
  if (!writable.writableFinished) await once(writable, 'finish');
  if (failure) throw failure;
  return total;
}

/**
 * Loads an empty table fast: drops its secondary indexes and foreign keys, runs `load`, rebuilds the
 * indexes and adds the foreign keys back, each checked once over all rows (a join) instead of one
 * probe per row (10 million at xlarge). Unique and primary-key indexes stay, so the load is still checked.
 */
export async function withIndexesRebuilt<T>(sql: Sql, table: string, load: () => Promise<T>): Promise<T> {
  const indexes = await sql<{ name: string; definition: string }[]>`
    select i.indexname as name, i.indexdef as definition
    from pg_indexes i join pg_class c on c.relname = i.indexname join pg_index x on x.indexrelid = c.oid
    where i.schemaname = current_schema() and i.tablename = ${table} and not x.indisunique`;
  for (const index of indexes) await sql`drop index ${sql(index.name)}`;
  const foreignKeys = await dropForeignKeys(sql, table);
  try {
    return await load();
  } finally {
    for (const index of indexes) await sql.unsafe(index.definition);
    await addForeignKeys(sql, table, foreignKeys);
  }
}
