/**
 * The identifier index (`identifier_hash`, docs/privacy.md): where each person's e-mails and phones are
 * held, by their DROP hash. The catalog's sources keep it current by triggers (migration 0035, whatever
 * writes them); a run's stored rows are indexed here, with the batch that stores them. A DROP list or an
 * erasure finds a person's records with one lookup, and deletes them through `deleteRecords`.
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import type { IdentifierSource } from '../../db/tables/privacy.ts';
import type { Row } from '../tools/types.ts';
import { dropHashesOf, identifiersOf } from './suppression.ts';

/**
 * Indexes a batch of a run's rows as stored (`firstSeq` on); nothing to write answers undefined. A
 * batch stored again (a worker that took the run over reads on from an offset its predecessor had
 * partly stored; the rows' insert does nothing for rows held) adds no entry a row has already: a batch
 * that starts below `stored`, the rows the run held before it, looks each entry up by the run's index
 * first. A batch past them, every batch of a run not taken over, writes without looking.
 */
export function indexRunRows(tx: Executor, runId: string, firstSeq: number, rows: readonly Row[], stored: number) {
  const entries: [string, string, number][] = [];
  rows.forEach((row, i) => {
    for (const { listType, hash } of dropHashesOf(identifiersOf(row))) entries.push([listType, hash, firstSeq + i]);
  });
  if (entries.length === 0) return undefined;
  const held =
    firstSeq < stored
      ? sql`where not exists (select 1 from identifier_hash h
          where h.run_id = ${runId} and h.seq = (e ->> 2)::int and h.list_type = e ->> 0 and h.hash = e ->> 1)`
      : sql``;
  return tx.execute(sql`
    insert into identifier_hash (list_type, hash, source, run_id, seq)
    select e ->> 0, e ->> 1, 'run_item', ${runId}, (e ->> 2)::int
    from json_array_elements(${JSON.stringify(entries)}::json) as e
    ${held}`);
}

/** A record that holds a person's identifier. */
export interface HeldRecord {
  source: IdentifierSource;
  recordId: number | null;
  runId: string | null;
  seq: number | null;
}

/** The records holding any of `hashes` (DROP list type, lower case, and hash). */
export async function recordsHolding(
  db: Executor,
  hashes: readonly { listType: string; hash: string }[],
): Promise<(HeldRecord & { listType: string; hash: string })[]> {
  if (hashes.length === 0) return [];
  return (await db.execute(sql`
    select h.list_type as "listType", h.hash, h.source, h.record_id as "recordId", h.run_id as "runId", h.seq
    from identifier_hash h
    join json_to_recordset(${JSON.stringify(hashes)}::json) as w("listType" text, hash text)
      on h.hash = w.hash and h.list_type = lower(w."listType")`)) as unknown as (HeldRecord & {
    listType: string;
    hash: string;
  })[];
}

/**
 * Removes what `records` hold about the person: a lead (person) and its deliveries go; a property keeps
 * the house and loses its owner's name, mailing address, e-mails and phones; a rental host keeps its
 * listings and loses its name, e-mail, phone and profile URL; a run's stored row goes. The index
 * follows (triggers, and here for run rows). Answers how many records were removed or cleared.
 */
export async function deleteRecords(tx: Executor, records: readonly HeldRecord[]): Promise<number> {
  const ids = (source: IdentifierSource) => [
    ...new Set(records.filter((r) => r.source === source && r.recordId !== null).map((r) => r.recordId as number)),
  ];
  const runRows = [
    ...new Map(
      records.filter((r) => r.source === 'run_item' && r.runId !== null).map((r) => [`${r.runId}\u0000${r.seq}`, r]),
    ).values(),
  ];
  const people = ids('person');
  const properties = ids('property');
  const hosts = ids('rental_host');
  const counted = async (query: Promise<unknown>) => ((await query) as { count?: number }).count ?? 0;
  let removed = 0;
  if (people.length > 0) removed += await counted(tx.execute(sql`delete from person where id in ${people}`));
  if (properties.length > 0)
    removed += await counted(
      tx.execute(sql`update property set owner_name = null, owner_mailing_address = null,
        owner_emails = '{}', owner_phones = '{}' where id in ${properties}`),
    );
  if (hosts.length > 0)
    removed += await counted(
      // Its key is its profile URL: replaced too, so nothing left names the host.
      tx.execute(sql`update rental_host set name = '', email = null, phone = null, host_key = 'erased:' || id
        where id in ${hosts}`),
    );
  if (runRows.length > 0) {
    const keys = JSON.stringify(runRows.map((r) => [r.runId, r.seq]));
    removed += await counted(
      tx.execute(sql`delete from run_item i using json_array_elements(${keys}::json) k
        where i.run_id = k ->> 0 and i.seq = (k ->> 1)::int`),
    );
    await tx.execute(sql`delete from identifier_hash h using json_array_elements(${keys}::json) k
      where h.run_id = k ->> 0 and h.seq = (k ->> 1)::int`);
  }
  return removed;
}
