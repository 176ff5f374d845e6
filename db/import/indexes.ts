import type postgres from 'postgres';
import type { Dataset } from './datasets.ts';
import { quoteIdentifier as quote } from '../identifiers.ts';

/** A table's indexes and foreign keys dropped for a large load and made again after it, in the load's transaction. */

/** A dropped index or foreign key: its name and what re-creates it. */
export interface Definition {
  name: string;
  definition: string;
}

export interface Dropped {
  indexes: Definition[];
  foreignKeys: Definition[];
}

/** Runs a query so that an abort of the import cancels it. */
export type Run = <R>(query: Promise<R> & { cancel(): unknown }) => Promise<R>;

/**
 * SQL listing the indexes dropped while loading and built again after: the secondary ones and,
 * with `$1` true (the table holds no row), also the unique ones that back no constraint (the
 * natural key); unique first. `key` marks the index on the natural-key column alone.
 */
export function droppableIndexes(table: string, keyColumn: string): string {
  return `select pg_get_indexdef(i.indexrelid) as definition,
      quote_ident(n.nspname) || '.' || quote_ident(c.relname) as name,
      (i.indisunique and i.indnatts = 1 and i.indexprs is null and i.indpred is null
        and i.indkey[0] = (select attnum from pg_attribute where attrelid = i.indrelid
          and attname = '${keyColumn.replaceAll("'", "''")}')) as key
    from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
    where i.indrelid = '${table}'::regclass and not i.indisprimary and not i.indisexclusion and i.indisvalid
      and (not i.indisunique or ($1 and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)))
    order by i.indisunique desc, c.relname`;
}

/**
 * Drops the table's secondary indexes and, when it is `empty`, its natural-key index and foreign
 * keys too (added back later with one check over all rows instead of a trigger call per row).
 * The caller holds the table's ACCESS EXCLUSIVE lock.
 */
export async function dropIndexes(
  tx: postgres.TransactionSql,
  run: Run,
  dataset: Dataset,
  empty: boolean,
): Promise<Dropped & { key?: Definition }> {
  const table = quote(dataset.table);
  const indexes = [
    ...(await run(
      tx.unsafe<(Definition & { key: boolean })[]>(droppableIndexes(table, dataset.naturalKey.column), [empty]),
    )),
  ];
  if (indexes.length > 0) await run(tx.unsafe(`drop index ${indexes.map((index) => index.name).join(', ')}`));
  const foreignKeys = empty ? await dropForeignKeys(tx, dataset.table, run) : [];
  const key = indexes.find((index) => index.key);
  return {
    key: key && { name: key.name, definition: key.definition },
    indexes: indexes.map((index) => ({ name: index.name, definition: index.definition })),
    foreignKeys,
  };
}

/** Builds the dropped indexes again and adds the foreign keys back (each checked once over all rows). */
export async function restoreIndexes(
  tx: postgres.TransactionSql,
  run: Run,
  dataset: Dataset,
  dropped: Dropped,
): Promise<void> {
  for (const index of dropped.indexes) await run(tx.unsafe(index.definition));
  await addForeignKeys(tx, dataset.table, dropped.foreignKeys, run);
}

const direct: Run = (query) => query;

/** What the foreign-key statements need of a connection or a transaction. */
type Statements = Pick<postgres.Sql, 'unsafe'>;

/**
 * Drops `table`'s foreign keys for a load into it (the importer's first load, the seeder); returns
 * what adds them back (addForeignKeys), each then checked once over all rows instead of per row.
 */
export async function dropForeignKeys(tx: Statements, table: string, run: Run = direct): Promise<Definition[]> {
  const foreignKeys = [
    ...(await run(
      tx.unsafe<Definition[]>(
        `select quote_ident(conname) as name, pg_get_constraintdef(oid) as definition from pg_constraint
          where conrelid = '${quote(table)}'::regclass and contype = 'f' order by conname`,
      ),
    )),
  ];
  if (foreignKeys.length > 0)
    await run(
      tx.unsafe(`alter table ${quote(table)} ${foreignKeys.map((fk) => `drop constraint ${fk.name}`).join(', ')}`),
    );
  return foreignKeys;
}

/** Adds back the foreign keys dropForeignKeys dropped. */
export async function addForeignKeys(
  tx: Statements,
  table: string,
  foreignKeys: readonly Definition[],
  run: Run = direct,
): Promise<void> {
  for (const fk of foreignKeys)
    await run(tx.unsafe(`alter table ${quote(table)} add constraint ${fk.name} ${fk.definition}`));
}
