/**
 * A DROP download built from the seeded catalog for the `privacy` suite: an Email list and a Phone list
 * whose work items say, in their IDs, the status the cycle must give them, so a run's answers can be
 * checked item by item.
 *
 *   deleted (`D…`)     a catalog person's e-mail (Email) or mobile (Phone) that the identifier index holds
 *                      for that one person only;
 *   opted out (`O…`)   a phone shared by exactly two people of different names, at the head of the Phone list;
 *   not found (`N…`)   an identifier nobody holds (`…@drop-bench.invalid`, ten digits starting with 0).
 *
 * The people of each kind are kept apart (the mobiles' people have ids divisible by 5, the e-mails' and the
 * shared phones' people others, and no shared phone's person is an e-mail's), so deleting one never changes another
 * item's answer. Hashes are computed here as DROP computes them (`dropHash(standardize…(x))`), and each
 * must equal the index's own (its SQL functions): a difference stops the suite.
 */
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { Sql } from '../../db/client.ts';
import { dropHash } from '../../src/privacy/drop/hash.ts';
import { standardizeEmail, standardizePhone } from '../../src/privacy/drop/standardize.ts';
import { writeZipFile } from '../../test/privacy/drop/zip-writer.ts';

export interface ArchivePlan {
  /** Work items in all. */
  items: number;
  /** The share that names a catalog person (deleted or opted out). */
  matchShare: number;
  /** The share on the Email list; the rest is on the Phone list. */
  emailShare: number;
  /** Phones shared by two people (opted out). */
  shared: number;
}

export const DEFAULT_PLAN: ArchivePlan = { items: 1_000_000, matchShare: 0.2, emailShare: 0.8, shared: 100 };

export type ListName = 'Email' | 'Phone';

/** Counts by the status the cycle must give. */
export interface StatusCounts {
  deleted: number;
  optedOut: number;
  notFound: number;
}

export interface ArchiveList extends StatusCounts {
  listType: ListName;
  file: string;
  items: number;
}

export interface DropArchive {
  path: string;
  /** `<YYYYMMDD>_<DataBrokerId>`: the cycle's name. */
  name: string;
  lists: ArchiveList[];
  expected: StatusCounts & { workItems: number };
  /** Seconds to pick the identifiers (SQL) and to hash and write the archive. */
  pickSeconds: number;
  writeSeconds: number;
  bytes: number;
}

/** One work item as written: its ID (class letter, list letter, number), list and hash. */
export interface ArchiveItem {
  id: string;
  listType: ListName;
  hash: string;
}

interface Picked {
  raw: string;
  hash: string;
}

const CLASS_STATUS = { D: 3, O: 4, N: 5 } as const;
/** The status a work item's ID says the cycle must give. */
export const expectedStatus = (workItemId: string) => CLASS_STATUS[workItemId[0] as keyof typeof CLASS_STATUS];

const idOf = (cls: 'D' | 'O' | 'N', list: ListName, index: number) =>
  `${cls}${list[0]}${String(index).padStart(10, '0')}`;

const unknownEmail = (i: number) => dropHash(standardizeEmail(`nobody${i}@drop-bench.invalid`) as string);
const unknownPhone = (i: number) => dropHash(standardizePhone(`0${String(i).padStart(9, '0')}`) as string);

/** Checks that each picked identifier hashes here as the index hashed it. */
function checkHashes(picked: Picked[], standardize: (v: string) => string | undefined, what: string) {
  for (const p of picked) {
    const ours = dropHash(standardize(p.raw) ?? '');
    if (ours !== p.hash)
      throw new Error(`${what} ${JSON.stringify(p.raw)}: hashed ${ours} here, ${p.hash} by the index`);
  }
}

/** `n` people's identifiers held for them alone, spread over the id range. */
async function heldAlone(sql: Sql, list: 'email' | 'phone', n: number, ownIds: 'fifth' | 'rest', exclude: string[]) {
  const column = list === 'email' ? sql`p.email` : sql`p.mobile`;
  const hashOf = list === 'email' ? sql`drop_email_hash(p.email)` : sql`drop_phone_hash(p.mobile)`;
  const rows = await sql<Picked[]>`
    select raw, hash from (
      select ${column} as raw, ${hashOf} as hash, row_number() over (order by p.id) as rn, count(*) over () as cnt
      from person p
      where ${column} is not null and ${ownIds === 'fifth' ? sql`p.id % 5 = 0` : sql`p.id % 5 <> 0`}
        and not (p.id = any(${exclude}::bigint[]))
        and (select count(*) from identifier_hash h where h.list_type = ${list} and h.hash = ${hashOf}) = 1
    ) s
    where (rn - 1) % greatest(cnt / ${n}, 1) = 0
    order by rn limit ${n}`;
  if (rows.length < n)
    throw new Error(`the catalog holds only ${rows.length} ${list}s of one person each, ${n} needed`);
  return rows;
}

/** Phones that exactly two people of different names hold, and those people. */
async function sharedPhones(sql: Sql, n: number) {
  const rows = await sql<(Picked & { people: string[] })[]>`
    with pairs as (
      select hash from identifier_hash where list_type = 'phone'
      group by hash having count(*) = 2 and bool_and(source = 'person')
    )
    select h.hash,
      min(case when drop_phone_hash(p.phone) = h.hash then p.phone else p.mobile end) as raw,
      array_agg(p.id::text) as people
    from pairs join identifier_hash h on h.list_type = 'phone' and h.hash = pairs.hash
      join person p on p.id = h.record_id
    where p.id % 5 <> 0
    group by h.hash
    having count(*) = 2 and count(distinct trim(lower(p.first_name || ' ' || p.last_name))) = 2
    order by h.hash limit ${n}`;
  if (rows.length < n)
    throw new Error(`the catalog holds only ${rows.length} phones shared by two people, ${n} needed`);
  return rows;
}

/** The items of one list in file order: the opted-out head, then deleted and not-found items evenly interleaved. */
function* itemsOf(list: ListName, size: number, optedOut: Picked[], deleted: Picked[]): Generator<ArchiveItem> {
  let i = 0;
  for (const p of optedOut) yield { id: idOf('O', list, i++), listType: list, hash: p.hash };
  const rest = size - optedOut.length;
  let d = 0;
  for (let k = 0; k < rest; k++) {
    const isDeleted = Math.floor(((k + 1) * deleted.length) / rest) > Math.floor((k * deleted.length) / rest);
    const hash = isDeleted ? (deleted[d++] as Picked).hash : list === 'Email' ? unknownEmail(k) : unknownPhone(k);
    yield { id: idOf(isDeleted ? 'D' : 'N', list, i++), listType: list, hash };
  }
}

/** A list's CSV (`ID,Hash`), in chunks of lines. */
function* csvOf(items: Iterable<ArchiveItem>): Generator<string> {
  let chunk = 'ID,Hash\n';
  for (const item of items) {
    chunk += `${item.id},${item.hash}\n`;
    if (chunk.length > 1 << 16) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/**
 * Picks the identifiers on `sql`'s catalog and writes the archive to `folder`; `items()` gives the same
 * work items again (for the baseline's COPY).
 */
export async function buildDropArchive(
  sql: Sql,
  folder: string,
  plan: ArchivePlan,
): Promise<DropArchive & { items(): Generator<ArchiveItem> }> {
  const emailItems = Math.round(plan.items * plan.emailShare);
  const phoneItems = plan.items - emailItems;
  const matched = Math.round(plan.items * plan.matchShare);
  const emailMatched = Math.round(matched * plan.emailShare);
  const phoneDeleted = matched - emailMatched - plan.shared;
  if (phoneDeleted < 0) throw new Error('more shared phones than matched phone items');

  const pickStart = performance.now();
  const shared = await sharedPhones(sql, plan.shared);
  const exclude = shared.flatMap((s) => s.people);
  const emails = await heldAlone(sql, 'email', emailMatched, 'rest', exclude);
  const mobiles = await heldAlone(sql, 'phone', phoneDeleted, 'fifth', exclude);
  checkHashes(emails, standardizeEmail, 'e-mail');
  checkHashes([...shared, ...mobiles], standardizePhone, 'phone');
  const pickSeconds = (performance.now() - pickStart) / 1000;

  // A DROP-like name: a date and a data broker ID of its own, so a kept database never sees it twice.
  const name = `20260801_${String(1000 + (randomBytes(2).readUInt16BE() % 9000))}`;
  const lists: ArchiveList[] = [
    {
      listType: 'Email',
      file: `${name}_Email.csv`,
      items: emailItems,
      deleted: emails.length,
      optedOut: 0,
      notFound: emailItems - emails.length,
    },
    {
      listType: 'Phone',
      file: `${name}_Phone.csv`,
      items: phoneItems,
      deleted: mobiles.length,
      optedOut: shared.length,
      notFound: phoneItems - mobiles.length - shared.length,
    },
  ];
  const listItems = (list: ArchiveList) =>
    list.listType === 'Email'
      ? itemsOf('Email', list.items, [], emails)
      : itemsOf('Phone', list.items, shared, mobiles);
  const path = `${folder}/${name}_DROP.zip`;
  const writeStart = performance.now();
  await writeZipFile(
    path,
    lists.map((list) => ({ name: list.file, chunks: csvOf(listItems(list)) })),
  );
  const writeSeconds = (performance.now() - writeStart) / 1000;
  const { size } = await stat(path);
  const sum = (key: keyof StatusCounts) => lists.reduce((a, l) => a + l[key], 0);
  return {
    path,
    name,
    lists,
    expected: { workItems: plan.items, deleted: sum('deleted'), optedOut: sum('optedOut'), notFound: sum('notFound') },
    pickSeconds,
    writeSeconds,
    bytes: size,
    *items() {
      for (const list of lists) yield* listItems(list);
    },
  };
}
