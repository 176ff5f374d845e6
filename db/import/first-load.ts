import type postgres from 'postgres';
import type { Dataset } from './datasets.ts';
import type { DirectRows } from './encode.ts';
import { dropIndexes, droppableIndexes, restoreIndexes, type Definition, type Dropped, type Run } from './indexes.ts';
import { COPY_NULL, escapeCopy } from './kinds.ts';
import { quoteIdentifier as quote } from '../identifiers.ts';
import { oneRow } from '../rows.ts';

/**
 * A first load: the dataset's table is empty, so the rows are copied straight into it while the
 * file is read, instead of into a staging table and from there into the table. The table is
 * locked (ACCESS EXCLUSIVE) before anything is read, so it stays empty for everyone else until
 * commit. Its secondary indexes, its natural-key index and its foreign keys are dropped first and
 * built again after the copy. What the staging table did in SQL, the reader does as it goes:
 * references are looked up in the referenced table (read into memory under a lock that keeps
 * writers out), defaults of empty cells are written out, and duplicate natural keys are found
 * by the natural-key index itself, whose build fails on them (they are then removed and the index
 * built again).
 */

/** Defaults the reader can write itself: a literal, cast or not (the datasets' defaults are all such). */
const CONSTANT = /^(?:'(?:[^']|'')*'|[+-]?\d+(?:\.\d+)?|true|false)(?:::[a-z_][\w ]*(?:\[\])*)?$/i;

/** A referenced table larger than this is not read into memory; the import goes through staging. */
export const MAX_REFERENCED_ROWS = 1_000_000;

const SAVEPOINT = 'leadgate_first_load';

export interface FirstLoad {
  /** How the reader writes rows for the table. */
  rows: DirectRows;
  /** `COPY` into the table, its columns in the order the reader writes them. */
  copy: string;
  dropped: Dropped;
  /** The natural-key index, built first. */
  key: Definition;
  /** The table's identity primary-key column: rows get increasing ids in file order. */
  identity: string;
}

/**
 * Whether this import can be a first load, checked and prepared inside the import transaction:
 * the table is empty under its lock, its primary key is an identity column, its natural key is a
 * plain unique index, every reference is a text key into a table of at most MAX_REFERENCED_ROWS
 * rows, and every default is a constant. Then the indexes and foreign keys are dropped and the
 * referenced tables read; otherwise the lock is let go again (undefined: use the staging table).
 */
export async function prepareFirstLoad(
  tx: postgres.TransactionSql,
  run: Run,
  dataset: Dataset,
): Promise<FirstLoad | undefined> {
  const columns = dataset.columns;
  if (
    columns.some(
      (c) =>
        (c.reference && c.codec.sqlType !== 'text') || (c.defaultSql !== undefined && !CONSTANT.test(c.defaultSql)),
    )
  )
    return undefined;
  const table = quote(dataset.table);
  const isEmpty = `select not exists (select 1 from ${table}) as empty`;
  if (!oneRow(await run(tx.unsafe<{ empty: boolean }[]>(isEmpty)), 'whether the table is empty').empty)
    return undefined;

  // Taken in a savepoint, so that the lock goes again when the load cannot be a first load after all.
  await run(tx.unsafe(`savepoint ${SAVEPOINT}`));
  await run(tx.unsafe(`lock table ${table} in access exclusive mode`));
  const references = columns.flatMap((c) => (c.reference ? [c.reference] : []));
  const referenceSizes = references.map(
    (ref) => `(select count(*) from (select 1 from ${quote(ref.table)} limit ${MAX_REFERENCED_ROWS + 1}) r)`,
  );
  const states = await run(
    tx.unsafe<{ empty: boolean; identity: string | null; key: boolean; largest: number }[]>(
      `select not exists (select 1 from ${table}) as empty,
        (select a.attname from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
          join pg_sequence s
            on s.seqrelid = pg_get_serial_sequence('${table.replaceAll("'", "''")}', a.attname)::regclass
          where i.indrelid = '${table}'::regclass and i.indisprimary and i.indnatts = 1 and a.attidentity <> ''
            and s.seqincrement > 0) as identity,
        exists (select 1 from (${droppableIndexes(table, dataset.naturalKey.column)}) k where k.key) as key,
        greatest(0, ${referenceSizes.join(', ') || '0'})::int as largest`,
      [true],
    ),
  );
  const state = oneRow(states, 'the state of the table before a first load');
  if (!state.empty || state.identity === null || !state.key || state.largest > MAX_REFERENCED_ROWS) {
    await run(tx.unsafe(`rollback to savepoint ${SAVEPOINT}`));
    return undefined;
  }
  await run(tx.unsafe(`release savepoint ${SAVEPOINT}`));

  const dropped = await dropIndexes(tx, run, dataset, true);
  if (!dropped.key) throw new Error(`the natural-key index of ${dataset.table} is gone`);
  // Each copied column comes through one of the columns read (a reference).
  const through = dataset.copied.map((copy) => ({ copy, from: columns.findIndex((c) => c.target === copy.via) }));
  const rows: DirectRows = {
    references: columns.map(() => undefined),
    defaults: columns.map(() => undefined),
    copied: [],
  };
  const asCopy = (value: unknown) => (value === null || value === undefined ? COPY_NULL : escapeCopy(value as string));

  const withDefaults = columns.flatMap((c, i) => (c.defaultSql === undefined ? [] : [{ i, sql: c.defaultSql }]));
  if (withDefaults.length > 0) {
    const [values = []] = await run(
      tx.unsafe(`select ${withDefaults.map((d) => `(${d.sql})::text`).join(', ')}`).values(),
    );
    for (const [n, d] of withDefaults.entries()) rows.defaults[d.i] = asCopy(values[n]);
  }
  const copiedSql = (reference: number) =>
    through.flatMap(({ copy, from }) => (from === reference ? [`(${copy.sql})::text`] : []));
  for (const [i, column] of columns.entries()) {
    const ref = column.reference;
    if (!ref) continue;
    // Writers of the referenced table wait until commit, so what is read here stays true.
    await run(tx.unsafe(`lock table ${quote(ref.table)} in share mode`));
    const found = await run(
      tx
        .unsafe(
          `select ref.${quote(ref.column)}::text, ref.${quote(ref.id)}::text${copiedSql(i)
            .map((sql) => `, ${sql}`)
            .join('')} from ${quote(ref.table)} ref`,
        )
        .values(),
    );
    // Each referenced row as [id, ...the columns copied through that reference, in order].
    const byKey = new Map<string, [string, ...string[]]>();
    for (const [key, id, ...copied] of found) byKey.set(key as string, [asCopy(id), ...copied.map(asCopy)]);
    rows.references[i] = byKey;
  }
  for (const [c, { copy, from }] of through.entries()) {
    const reference = columns[from]?.reference;
    if (!reference) throw new Error(`${copy.name} of ${dataset.name} is copied through ${copy.via}, not a reference`);
    // What the staging path's left join gives a row without a reference: the expression over a row of nulls.
    const [values = []] = await run(
      tx
        .unsafe(
          `select (${copy.sql})::text from (select 1) one
            left join ${quote(reference.table)} ref on false`,
        )
        .values(),
    );
    const at = 1 + through.slice(0, c).filter((other) => other.from === from).length;
    rows.copied.push({ from, at, withoutReference: asCopy(values[0]) });
  }
  const targets = [
    ...columns.map((c) => c.target),
    ...dataset.computed.map((c) => c.name),
    ...dataset.copied.map((c) => c.name),
  ];
  return {
    rows,
    copy: `copy ${table} (${targets.map(quote).join(', ')}) from stdin`,
    dropped: {
      indexes: dropped.indexes.filter((index) => index.name !== dropped.key?.name),
      foreignKeys: dropped.foreignKeys,
    },
    key: dropped.key,
    identity: state.identity,
  };
}

/**
 * After the copy: the natural-key index is built first; when the file repeated a key, its build
 * fails, and then every row but the last of each key (the highest id: ids follow the file) is
 * deleted and the index built again. Returns the number of rows deleted so. Then the other
 * indexes and the foreign keys.
 */
export async function finishFirstLoad(
  tx: postgres.TransactionSql,
  run: Run,
  dataset: Dataset,
  load: FirstLoad,
  onDuplicates: (removing: boolean) => void,
): Promise<number> {
  let duplicates = 0;
  try {
    await tx.savepoint((sp) => run(sp.unsafe(load.key.definition)));
  } catch (err) {
    if ((err as { code?: string }).code !== '23505') throw err;
    onDuplicates(true);
    const table = quote(dataset.table);
    const key = quote(dataset.naturalKey.column);
    const id = quote(load.identity);
    duplicates = (
      await run(
        tx.unsafe(`delete from ${table} t
          using (select ${key} as key, max(${id}) as keep from ${table} group by ${key} having count(*) > 1) d
          where t.${key} = d.key and t.${id} <> d.keep`),
      )
    ).count;
    onDuplicates(false);
    await run(tx.unsafe(load.key.definition));
  }
  await restoreIndexes(tx, run, dataset, load.dropped);
  return duplicates;
}
