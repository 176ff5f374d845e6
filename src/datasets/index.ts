/**
 * An account's named datasets: the rows of one tool kept one an identity across the runs that name the
 * dataset (`datasetName` on any start), and "only new" delivery (`onlyNew`): a run delivers, and is
 * billed for, only rows whose identity the dataset has not delivered before. A row's identity is the
 * values of its tool's identity columns (`ToolDefinition.identity`). The rows themselves are the runs'
 * rows (kept as long as those are, 48 hours after each run ends); the identities are kept until the
 * dataset is cleared or deleted.
 */
import { and, count, eq, inArray, isNull, max, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Database, Transaction } from '../../db/client.ts';
import { type AccountDataset, accountDatasetTable, datasetItemTable } from '../../db/tables/runs.ts';
import type { Row, ToolDefinition } from '../tools/types.ts';
import { AppError, ValidationError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { unstorable } from '../shared/params.ts';

export const newDatasetId = () => `ds_${randomBase62(16)}`;

/** A dataset's name as a start gives it. */
export const datasetName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'at most 100 characters')
  .describe('Adds the rows to this dataset of the account, one row a result.');

export const onlyNew = z.boolean().describe('Only rows new to the dataset are delivered and billed.');

/** The start fields every tool takes for datasets (REST body, GraphQL arguments, MCP arguments). */
export const datasetStartFields = z.object({
  datasetName: datasetName.optional().meta({ title: 'Dataset name', examples: ['denver-dentists'] }),
  onlyNew: onlyNew.optional().meta({ title: 'Only new rows', examples: [true] }),
});

/** What a run asks of a dataset. */
export interface DatasetChoice {
  name: string;
  onlyNew: boolean;
}

/** The identity of a row of `tool`: its identity columns' values, or null when none is filled (always new). */
export function identityOf(tool: Pick<ToolDefinition, 'identity'>, row: Row): string | null {
  const parts = tool.identity.map((column) => {
    const value = row[column];
    if (value === null || value === undefined || value === '') return '';
    return (typeof value === 'string' ? value : JSON.stringify(value)).trim().toLowerCase();
  });
  return parts.every((part) => part === '') ? null : parts.join('\u001f');
}

/**
 * The dataset of `name` for a run of `tool` in the start's transaction, created when new; 400
 * `validation_failed` at `datasetName` when it holds another tool's rows.
 */
export async function openDataset(
  tx: Transaction,
  accountId: string,
  name: string,
  tool: Pick<ToolDefinition, 'name' | 'title'>,
): Promise<AccountDataset> {
  await tx
    .insert(accountDatasetTable)
    .values({ id: newDatasetId(), accountId, name, tool: tool.name })
    .onConflictDoNothing();
  const [dataset] = await tx
    .select()
    .from(accountDatasetTable)
    .where(and(eq(accountDatasetTable.accountId, accountId), eq(accountDatasetTable.name, name)));
  if (!dataset) throw new Error(`dataset ${name} was neither created nor found`);
  if (dataset.tool !== tool.name) {
    const message =
      `Dataset "${name}" holds rows of another tool (${dataset.tool}); ` + `name another dataset for ${tool.title}.`;
    throw new ValidationError([{ path: 'datasetName', message }], message);
  }
  return dataset;
}

const CLAIM_BATCH = 1_000;

/**
 * Claims identities for a run of a dataset: answers those this run owns, i.e. those no other run of the
 * dataset claimed or delivered first. Safe to repeat: an attempt replayed gets the same answer.
 */
export async function claimIdentities(
  db: Database,
  accountId: string,
  dataset: string,
  runId: string,
  keys: string[],
): Promise<Set<string>> {
  const owned = new Set<string>();
  const unique = [...new Set(keys)];
  for (let i = 0; i < unique.length; i += CLAIM_BATCH) {
    const slice = unique.slice(i, i + CLAIM_BATCH);
    await db
      .insert(datasetItemTable)
      .values(slice.map((key) => ({ accountId, dataset, key, runId })))
      .onConflictDoNothing();
    const rows = await db
      .select({ key: datasetItemTable.key })
      .from(datasetItemTable)
      .where(
        and(
          eq(datasetItemTable.accountId, accountId),
          eq(datasetItemTable.dataset, dataset),
          inArray(datasetItemTable.key, slice),
          eq(datasetItemTable.runId, runId),
        ),
      );
    for (const row of rows) owned.add(row.key);
  }
  return owned;
}

/**
 * Records rows a run stored (from `firstSeq`, `keys` their identities in order) as the dataset's rows
 * of those identities, in the batch's transaction: the latest delivery of an identity is its row.
 */
export function recordDelivered(
  tx: Transaction,
  accountId: string,
  dataset: string,
  runId: string,
  firstSeq: number,
  keys: (string | null)[],
) {
  const entries = keys.flatMap((key, i) => (key === null ? [] : [{ key, seq: firstSeq + i }]));
  if (entries.length === 0) return undefined;
  return tx.execute(sql`
    insert into dataset_item (account_id, dataset, key, run_id, seq, delivered_at)
    select ${accountId}, ${dataset}, e.key, ${runId}, e.seq, now()
    from json_to_recordset(${JSON.stringify(entries)}::json) as e(key text, seq int)
    on conflict (account_id, dataset, key) do update
      set run_id = excluded.run_id, seq = excluded.seq, delivered_at = excluded.delivered_at`);
}

/** At a run's end: identities it claimed but whose rows it never stored are the dataset's no more. */
export function releaseUndelivered(tx: Transaction, runId: string) {
  return tx.delete(datasetItemTable).where(and(eq(datasetItemTable.runId, runId), isNull(datasetItemTable.seq)));
}

/** An account's dataset by id (`ds_…`) or name; 404 `dataset_not_found` when it has none. */
export async function findDataset(db: Database, accountId: string, idOrName: string): Promise<AccountDataset> {
  if (unstorable(idOrName)) throw new AppError(404, 'dataset_not_found', 'The account has no such dataset.');
  const [dataset] = await db
    .select()
    .from(accountDatasetTable)
    .where(
      and(
        eq(accountDatasetTable.accountId, accountId),
        or(eq(accountDatasetTable.id, idOrName), eq(accountDatasetTable.name, idOrName)),
      ),
    )
    .limit(1);
  if (!dataset) throw new AppError(404, 'dataset_not_found', `The account has no dataset ${idOrName}.`);
  return dataset;
}

export interface DatasetSummary extends AccountDataset {
  /** Identities it has delivered (kept until it is cleared or deleted). */
  identityCount: number;
  /** Rows it holds now: one per identity whose delivering run still keeps its rows. */
  rowCount: number;
  lastDeliveredAt: Date | null;
}

/** The account's datasets, newest first, with their counts. */
export async function listDatasets(db: Database, accountId: string, only?: string): Promise<DatasetSummary[]> {
  const datasets = await db
    .select()
    .from(accountDatasetTable)
    .where(
      and(
        eq(accountDatasetTable.accountId, accountId),
        only === undefined ? undefined : eq(accountDatasetTable.id, only),
      ),
    )
    .orderBy(sql`${accountDatasetTable.createdAt} desc, ${accountDatasetTable.id} desc`);
  if (datasets.length === 0) return [];
  const counts = await db
    .select({
      dataset: datasetItemTable.dataset,
      identities: count(),
      rows: sql<number>`count(*) filter (where exists (select 1 from run_item ri
        where ri.run_id = ${datasetItemTable.runId} and ri.seq = ${datasetItemTable.seq}))::int`,
      last: max(datasetItemTable.deliveredAt),
    })
    .from(datasetItemTable)
    .where(
      and(
        eq(datasetItemTable.accountId, accountId),
        inArray(
          datasetItemTable.dataset,
          datasets.map((d) => d.name),
        ),
      ),
    )
    .groupBy(datasetItemTable.dataset);
  const byName = new Map(counts.map((c) => [c.dataset, c]));
  return datasets.map((d) => {
    const c = byName.get(d.name);
    return {
      ...d,
      identityCount: c?.identities ?? 0,
      rowCount: c?.rows ?? 0,
      lastDeliveredAt: c?.last ? new Date(c.last) : null,
    };
  });
}

/** One dataset with its counts. */
export async function datasetSummary(db: Database, accountId: string, idOrName: string): Promise<DatasetSummary> {
  const dataset = await findDataset(db, accountId, idOrName);
  const [summary] = await listDatasets(db, accountId, dataset.id);
  if (!summary) throw new AppError(404, 'dataset_not_found', `The account has no dataset ${idOrName}.`);
  return summary;
}

/** Where a page of a dataset's rows starts: after this delivery (its time, run and row). */
export interface RowCursor {
  deliveredAt: string;
  runId: string;
  seq: number;
}

export const encodeRowCursor = (c: RowCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
export function decodeRowCursor(text: string): RowCursor {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as RowCursor;
    if (typeof c.deliveredAt === 'string' && typeof c.runId === 'string' && Number.isInteger(c.seq)) return c;
  } catch {
    // answered below
  }
  throw new ValidationError([{ path: 'after', message: 'is not a cursor a page of this dataset gave' }]);
}

/**
 * A page of a dataset's rows in the order they were delivered (oldest first), after `after`: rows whose
 * run no longer keeps them are gone from it.
 */
export async function datasetRows(
  db: Database,
  dataset: AccountDataset,
  page: { after?: RowCursor; limit: number },
): Promise<{ rows: Row[]; cursors: RowCursor[]; next: RowCursor | null }> {
  const after = page.after
    ? sql`and (di.delivered_at, di.run_id, di.seq)
        > (${page.after.deliveredAt}::timestamptz, ${page.after.runId}, ${page.after.seq})`
    : sql``;
  const found = (await db.execute(sql`
    select ri.data, di.run_id, di.seq,
      to_char(di.delivered_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as delivered
    from dataset_item di join run_item ri on ri.run_id = di.run_id and ri.seq = di.seq
    where di.account_id = ${dataset.accountId} and di.dataset = ${dataset.name} and di.seq is not null ${after}
    order by di.delivered_at, di.run_id, di.seq
    limit ${page.limit + 1}`)) as unknown as { data: Row; delivered: string; run_id: string; seq: number }[];
  const rows = found.slice(0, page.limit);
  const cursors = rows.map((r) => ({
    deliveredAt: r.delivered,
    runId: r.run_id,
    seq: r.seq,
  }));
  return {
    rows: rows.map((r) => r.data),
    cursors,
    next: found.length > page.limit ? (cursors.at(-1) ?? null) : null,
  };
}

/** Every row of a dataset, page after page, for an export. */
export async function* allDatasetRows(db: Database, dataset: AccountDataset): AsyncGenerator<Row> {
  let after: RowCursor | undefined;
  for (;;) {
    const page = await datasetRows(db, dataset, { ...(after ? { after } : {}), limit: 1_000 });
    yield* page.rows;
    if (!page.next) return;
    after = page.next;
  }
}

/**
 * Forgets what a dataset delivered: its rows and identities (only-new starts afresh); the dataset stays.
 * Answers the identities forgotten. Claims of runs in flight go too: those runs deliver their rows anyway.
 */
export async function clearDataset(db: Database, dataset: AccountDataset): Promise<number> {
  const gone = await db
    .delete(datasetItemTable)
    .where(and(eq(datasetItemTable.accountId, dataset.accountId), eq(datasetItemTable.dataset, dataset.name)))
    .returning({ key: datasetItemTable.key });
  return gone.length;
}

/** Deletes a dataset and its identities; runs keep their own rows. */
export async function deleteDataset(db: Database, dataset: AccountDataset): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .delete(datasetItemTable)
      .where(and(eq(datasetItemTable.accountId, dataset.accountId), eq(datasetItemTable.dataset, dataset.name)));
    await tx.delete(accountDatasetTable).where(eq(accountDatasetTable.id, dataset.id));
  });
}
