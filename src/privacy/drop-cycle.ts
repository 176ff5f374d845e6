/**
 * A DROP deletion cycle (docs/privacy.md, docs/drop.md): a downloaded archive's work items staged, each
 * matched against the identifier index, the people found deleted (or opted out when the identifier is
 * shared by several people), every identifier kept as a `hash` suppression on the deployment's list so
 * later data about them never leaves, and a response file written per list. The cycle is named after
 * its lists (date and data broker ID): the same archive again is the same cycle, resumed where it
 * stopped, and a finished one answers with the statuses it gave.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { and, asc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.ts';
import { dropCycleTable, dropWorkItemTable, type DropCycle } from '../../db/tables/privacy.ts';
import { listDropArchive, readDropArchive, type DropItem } from './drop/lists.ts';
import { responseFileNameFor, writeResponseCsv, type ResponseRow } from './drop/response.ts';
import { OPERATOR, recordAudit, SYSTEM } from '../audit/audit.ts';
import { DropFormatError, isListType, STATUS, type StatusCode } from './drop/spec.ts';
import { deleteRecords, type HeldRecord, recordsHolding } from './identifier-index.ts';
import { addSuppressions, hashEntry } from './suppression.ts';

/** Work items staged or matched per transaction. */
const CHUNK = 5_000;
/** Stored for a withdrawn identifier (the Removed file) once its suppression is lifted; never answered. */
const LIFTED = 0;

export interface DropCycleSummary {
  cycleId: string;
  /** `<YYYYMMDD>_<DataBrokerId>`: the lists' date and data broker. */
  name: string;
  /** Whether this archive had been processed before (the statuses are the ones given then). */
  repeated: boolean;
  workItems: number;
  deleted: number;
  optedOut: number;
  notFound: number;
  /** Withdrawn identifiers whose suppression was lifted. */
  removed: number;
  /** Catalog and stored run records removed or cleared. */
  recordsDeleted: number;
  responses: { file: string; path: string; rows: number }[];
}

export interface DropCycleOptions {
  /** A file (when the archive holds one list with requests) or a folder; default the current directory. */
  out?: string;
  /** Who runs it, for the operator's audit log: the operator's command (default) or the scheduled job. */
  by?: 'operator' | 'system';
  /** Called as the cycle moves, for a command's progress line. */
  onProgress?: (phase: 'reading' | 'matching' | 'answering', done: number) => void;
}

/**
 * The archive's lists' common date and data broker ID, which name the cycle, and the folder or file the
 * answers go to: checked before anything is done, so a bad `--out` changes nothing.
 */
async function planCycle(
  zipPath: string,
  out: string | undefined,
): Promise<{ name: string; folder: string | undefined }> {
  const files = await listDropArchive(zipPath);
  const lists = files.filter((f) => isListType(f.dataType)).map((f) => f.name);
  const folder =
    out === undefined
      ? '.'
      : out.endsWith('/') || (await stat(out).catch(() => undefined))?.isDirectory()
        ? out
        : undefined;
  if (folder === undefined && lists.length > 1)
    throw new DropOutError(
      `the archive holds ${lists.length} lists to answer (${lists.join(', ')}): give --out a folder`,
    );
  return { name: nameOf(zipPath, files), folder };
}

function nameOf(zipPath: string, files: readonly { date: string; dataBrokerId: string }[]): string {
  const names = new Set(files.map((f) => `${f.date}_${f.dataBrokerId}`));
  if (names.size !== 1)
    throw new DropFormatError(
      `${path.basename(zipPath)}: its lists must share one date and data broker ID ` +
        `(found ${[...names].join(', ') || 'no list'})`,
    );
  return [...names][0] as string;
}

/** The name of the cycle an archive starts: its lists' date and data broker ID (`20260312_4821`). */
export const cycleNameOf = async (zipPath: string) => nameOf(zipPath, await listDropArchive(zipPath));

/** `--out` names a file where the archive holds several lists. */
export class DropOutError extends Error {}

async function cycleFor(db: Database, name: string): Promise<{ cycle: DropCycle; repeated: boolean }> {
  const [created] = await db
    .insert(dropCycleTable)
    .values({ id: `drp_${randomBytes(10).toString('base64url')}`, fileName: name })
    .onConflictDoNothing()
    .returning();
  if (created) return { cycle: created, repeated: false };
  const [found] = await db.select().from(dropCycleTable).where(eq(dropCycleTable.fileName, name));
  if (!found) throw new Error(`DROP cycle ${name} vanished`);
  return { cycle: found, repeated: found.state === 'answered' || found.state === 'uploaded' };
}

/** Stages every row of the archive (again after a crash: rows already staged are kept as they are). */
async function stage(db: Database, cycle: DropCycle, zipPath: string, options: DropCycleOptions): Promise<void> {
  let chunk: DropItem[] = [];
  let read = 0;
  const flush = async () => {
    if (chunk.length === 0) return;
    const items = chunk.map((i) => ({
      cycleId: cycle.id,
      file: i.file,
      line: i.line,
      listType: i.listType,
      workItemId: i.workItemId,
      hash: i.hash,
      removed: i.kind === 'removed',
    }));
    await db.insert(dropWorkItemTable).values(items).onConflictDoNothing();
    read += chunk.length;
    chunk = [];
    options.onProgress?.('reading', read);
  };
  for await (const item of readDropArchive(zipPath)) {
    chunk.push(item);
    if (chunk.length >= CHUNK) await flush();
  }
  await flush();
  await db
    .update(dropCycleTable)
    .set({
      state: 'matching',
      workItems: sql`(select count(*) from drop_work_item where cycle_id = ${cycle.id} and not removed)`,
    })
    .where(eq(dropCycleTable.id, cycle.id));
}

/** The people a hash's records name (lower-case names; a stored run row names no one). */
async function namesOf(tx: Executor, records: readonly HeldRecord[]): Promise<Map<string, string>> {
  const keys = records.filter((r) => r.recordId !== null).map((r) => [r.source, r.recordId]);
  if (keys.length === 0) return new Map();
  const rows = (await tx.execute(sql`
    select k ->> 0 as source, (k ->> 1)::bigint as id, lower(coalesce(
      (select p.first_name || ' ' || p.last_name from person p where k ->> 0 = 'person' and p.id = (k ->> 1)::bigint),
      (select o.owner_name from property o where k ->> 0 = 'property' and o.id = (k ->> 1)::bigint),
      (select h.name from rental_host h where k ->> 0 = 'rental_host' and h.id = (k ->> 1)::bigint))) as name
    from json_array_elements(${JSON.stringify(keys)}::json) k`)) as unknown as {
    source: string;
    id: string;
    name: string | null;
  }[];
  return new Map(rows.filter((r) => r.name).map((r) => [`${r.source}:${r.id}`, (r.name as string).trim()]));
}

/** The hashes of `items` that name a person this cycle deleted. */
async function goneAmong(tx: Executor, cycleId: string, items: readonly { listType: string; hash: string }[]) {
  const rows = (await tx.execute(sql`
    select g.list_type as "listType", g.hash from drop_gone_hash g
    join json_to_recordset(${JSON.stringify(items.map((i) => ({ listType: i.listType, hash: i.hash })))}::json)
      as w("listType" text, hash text) on g.hash = w.hash and g.list_type = lower(w."listType")
    where g.cycle_id = ${cycleId}`)) as unknown as { listType: string; hash: string }[];
  return new Set(rows.map((r) => hashEntry(r.listType, r.hash)));
}

/** Keeps every identifier of the records about to be deleted, for the cycle's later work items. */
async function rememberGone(tx: Executor, cycleId: string, records: readonly HeldRecord[]): Promise<void> {
  const catalog = records.filter((r) => r.recordId !== null).map((r) => [r.source, r.recordId]);
  const runRows = records.filter((r) => r.runId !== null).map((r) => [r.runId, r.seq]);
  if (catalog.length > 0)
    await tx.execute(sql`
      insert into drop_gone_hash (cycle_id, list_type, hash)
      select distinct ${cycleId}, h.list_type, h.hash
      from json_array_elements(${JSON.stringify(catalog)}::json) k
      join identifier_hash h on h.source = k ->> 0 and h.record_id = (k ->> 1)::bigint
      on conflict do nothing`);
  if (runRows.length > 0)
    await tx.execute(sql`
      insert into drop_gone_hash (cycle_id, list_type, hash)
      select distinct ${cycleId}, h.list_type, h.hash
      from json_array_elements(${JSON.stringify(runRows)}::json) k
      join identifier_hash h on h.run_id = k ->> 0 and h.seq = (k ->> 1)::int
      on conflict do nothing`);
}

/**
 * One chunk of unanswered requests: each matched, acted on and suppressed, its status stored, in one
 * transaction. Answers how many it answered (0: none left).
 */
async function matchChunk(db: Database, cycle: DropCycle): Promise<number> {
  return db.transaction(async (tx) => {
    const items = await tx
      .select()
      .from(dropWorkItemTable)
      .where(
        and(
          eq(dropWorkItemTable.cycleId, cycle.id),
          eq(dropWorkItemTable.removed, false),
          isNull(dropWorkItemTable.status),
        ),
      )
      .orderBy(asc(dropWorkItemTable.file), asc(dropWorkItemTable.line))
      .limit(CHUNK)
      .for('update', { skipLocked: true });
    if (items.length === 0) return 0;
    const held = await recordsHolding(tx, items);
    const byHash = new Map<string, HeldRecord[]>();
    for (const r of held)
      byHash.set(hashEntry(r.listType, r.hash), [...(byHash.get(hashEntry(r.listType, r.hash)) ?? []), r]);
    const names = await namesOf(tx, held);
    const gone = await goneAmong(tx, cycle.id, items);
    const toDelete: HeldRecord[] = [];
    const counts = { deleted: 0, optedOut: 0, notFound: 0 };
    const statuses = items.map((item) => {
      const records = byHash.get(hashEntry(item.listType, item.hash)) ?? [];
      // A person this cycle deleted already, named again (their phone after their address).
      let status: StatusCode = gone.has(hashEntry(item.listType, item.hash)) ? STATUS.deleted : STATUS.notFound;
      if (records.length > 0) {
        // Several people behind one identifier (a shared phone, a family's address): none of them is
        // deleted on the strength of it, all are kept from leaving (the suppression below).
        const people = new Set(records.map((r) => names.get(`${r.source}:${r.recordId}`)).filter(Boolean));
        status = people.size > 1 ? STATUS.optedOut : STATUS.deleted;
        if (status === STATUS.deleted) toDelete.push(...records);
      }
      counts[status === STATUS.deleted ? 'deleted' : status === STATUS.optedOut ? 'optedOut' : 'notFound'] += 1;
      return { file: item.file, line: item.line, status };
    });
    await rememberGone(tx, cycle.id, toDelete);
    const recordsDeleted = await deleteRecords(tx, toDelete);
    await addSuppressions(
      tx,
      null,
      items.map((i) => ({ kind: 'hash' as const, value: hashEntry(i.listType, i.hash) })),
      'drop',
      { note: `DROP ${cycle.fileName}` },
    );
    await tx.execute(sql`
      update drop_work_item w set status = s.status
      from json_to_recordset(${JSON.stringify(statuses)}::json) as s(file text, line int, status smallint)
      where w.cycle_id = ${cycle.id} and w.file = s.file and w.line = s.line`);
    await tx
      .update(dropCycleTable)
      .set({
        deleted: sql`${dropCycleTable.deleted} + ${counts.deleted}`,
        optedOut: sql`${dropCycleTable.optedOut} + ${counts.optedOut}`,
        notFound: sql`${dropCycleTable.notFound} + ${counts.notFound}`,
        recordsDeleted: sql`${dropCycleTable.recordsDeleted} + ${recordsDeleted}`,
      })
      .where(eq(dropCycleTable.id, cycle.id));
    return items.length;
  });
}

/**
 * Withdrawn identifiers (the Removed file): the suppression a DROP list added for them is lifted, so the
 * person's later data is no longer kept out on its account; what was deleted stays deleted.
 */
async function liftRemoved(db: Database, cycle: DropCycle): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`
      with w as (
        update drop_work_item set status = ${LIFTED}
        where cycle_id = ${cycle.id} and removed and status is null
        returning list_type, hash)
      delete from suppression s using w
      where s.account_id is null and s.kind = 'hash' and s.source = 'drop'
        and s.value = lower(w.list_type) || ':' || w.hash`);
    const removed = (await tx.execute(
      sql`select count(*)::int as n from drop_work_item where cycle_id = ${cycle.id} and removed`,
    )) as unknown as { n: number }[];
    await tx
      .update(dropCycleTable)
      .set({ removed: removed[0]?.n ?? 0 })
      .where(eq(dropCycleTable.id, cycle.id));
  });
}

async function* statusesOf(db: Database, cycleId: string, file: string): AsyncGenerator<ResponseRow> {
  let after = 0;
  for (;;) {
    const rows = await db
      .select({
        line: dropWorkItemTable.line,
        workItemId: dropWorkItemTable.workItemId,
        status: dropWorkItemTable.status,
      })
      .from(dropWorkItemTable)
      .where(
        and(
          eq(dropWorkItemTable.cycleId, cycleId),
          eq(dropWorkItemTable.file, file),
          gt(dropWorkItemTable.line, after),
        ),
      )
      .orderBy(asc(dropWorkItemTable.line))
      .limit(10_000);
    for (const row of rows) yield { workItemId: row.workItemId, status: row.status as StatusCode };
    const last = rows.at(-1);
    if (!last) return;
    after = last.line;
  }
}

/** Writes one response file per list holding requests (an empty list needs none). */
async function answer(db: Database, cycle: DropCycle, out: { folder: string | undefined; file: string | undefined }) {
  const lists = (
    await db
      .selectDistinct({ file: dropWorkItemTable.file })
      .from(dropWorkItemTable)
      .where(and(eq(dropWorkItemTable.cycleId, cycle.id), eq(dropWorkItemTable.removed, false)))
  )
    .map((r) => r.file)
    .filter((file) => isListType(file.replace(/^\d{8}_\d{4}_/, '').replace(/(_[A-Za-z0-9]+)?\.csv$/, '')))
    .sort();
  const names = lists.map((file) => responseFileNameFor(file));
  if (out.folder !== undefined) await mkdir(out.folder, { recursive: true });
  const paths = names.map((name) => (out.folder === undefined ? (out.file as string) : path.join(out.folder, name)));
  const responses: DropCycleSummary['responses'] = [];
  for (const [i, file] of lists.entries()) {
    const at = paths[i] as string;
    const rows = await writeResponseCsv(statusesOf(db, cycle.id, file), createWriteStream(at), names[i]);
    responses.push({ file: names[i] as string, path: at, rows });
  }
  return responses;
}

/**
 * Runs the cycle of the archive at `zipPath`: stage, match and act, lift withdrawn identifiers, answer.
 * Each step resumes where a stopped run left it; a finished cycle only writes its answers again.
 */
export async function runDropCycle(
  db: Database,
  zipPath: string,
  options: DropCycleOptions = {},
): Promise<DropCycleSummary> {
  const { name, folder } = await planCycle(zipPath, options.out);
  const { cycle, repeated } = await cycleFor(db, name);
  if (cycle.state === 'reading') await stage(db, cycle, zipPath, options);
  if (!repeated) {
    let matched = 0;
    for (let n = await matchChunk(db, cycle); n > 0; n = await matchChunk(db, cycle)) {
      matched += n;
      options.onProgress?.('matching', matched);
    }
    await liftRemoved(db, cycle);
    await db.transaction(async (tx) => {
      const [answered] = await tx
        .update(dropCycleTable)
        .set({ state: 'answered', answeredAt: new Date() })
        .where(and(eq(dropCycleTable.id, cycle.id), eq(dropCycleTable.state, 'matching')))
        .returning();
      if (!answered) return;
      const { workItems, deleted, optedOut, notFound, recordsDeleted } = answered;
      await recordAudit(tx, {
        accountId: null,
        actor: options.by === 'system' ? SYSTEM : OPERATOR,
        action: 'privacy.drop_cycle',
        target: { type: 'drop_cycle', id: answered.id, label: name },
        details: { fileName: name, workItems, deleted, optedOut, exempted: 0, notFound, recordsDeleted },
      });
    });
  }
  options.onProgress?.('answering', 0);
  const responses = await answer(db, cycle, { folder, file: options.out });
  const [done] = await db.select().from(dropCycleTable).where(eq(dropCycleTable.id, cycle.id));
  if (!done) throw new Error(`DROP cycle ${name} vanished`);
  const { workItems, deleted, optedOut, notFound, removed, recordsDeleted } = done;
  return {
    cycleId: done.id,
    name,
    repeated,
    workItems,
    deleted,
    optedOut,
    notFound,
    removed,
    recordsDeleted,
    responses,
  };
}

/** Marks a cycle's answers as accepted by DROP. */
export async function markUploaded(db: Database, cycleId: string): Promise<void> {
  await db
    .update(dropCycleTable)
    .set({ state: 'uploaded', uploadedAt: new Date() })
    .where(eq(dropCycleTable.id, cycleId));
}
