/**
 * What the gateway holds about a person, found from their identifiers (docs/privacy.md): the records the
 * identifier index names (catalog people, property owners, rental hosts, stored run rows), the rows of
 * enrichment jobs that name them, the accounts those were delivered to (delivered-lead records, the runs'
 * and the jobs' accounts), and the identities of accounts' datasets that name them. An erasure removes
 * these; an access request reads them out.
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { type EnrichmentJobHolding, enrichmentJobsNaming } from './enrichment-jobs.ts';
import { type HeldRecord, recordsHolding } from './identifier-index.ts';
import type { NormalIdentifier } from './requests.ts';

/** An identity of an account's dataset (`dataset_item`) that names the person. */
export interface DatasetIdentity {
  accountId: string;
  dataset: string;
  tool: string;
  key: string;
  deliveredAt: Date | null;
}

export interface Held {
  /** The records that are the person's: removed by an erasure, read out by an access request. */
  records: HeldRecord[];
  /** Records reached only through an identifier that names other people too: kept, and not read out. */
  shared: number;
  people: number[];
  properties: number[];
  hosts: number[];
  runRows: { runId: string; seq: number }[];
  /** The runs the stored rows belong to, with their accounts. */
  runs: { id: string; accountId: string }[];
  deliveredLeads: { accountId: string; personId: number }[];
  identities: DatasetIdentity[];
  /** Enrichment jobs whose kept rows name the person (outside the identifier index). */
  enrichmentJobs: EnrichmentJobHolding[];
  /** Every account the person was delivered to: by a run's rows, the lead database, a dataset, an enrichment job. */
  accounts: string[];
}

/**
 * Datasets whose identity is a catalog record's id, as the tool's rows carry it (src/tools: the lead
 * scraper's `id`; the people finder's `person_id`, `lead-<id>` or `owner-<property id>`): those
 * identities name the person as long as the dataset keeps them, after the rows themselves are gone.
 */
const CATALOG_ID_IDENTITIES: Record<string, (held: Pick<Held, 'people' | 'properties'>) => string[]> = {
  'lead-scraper': ({ people }) => people.map(String),
  'people-finder': ({ people, properties }) => [
    ...people.map((id) => `lead-${id}`),
    ...properties.map((id) => `owner-${id}`),
  ],
};

const ids = (records: readonly HeldRecord[], source: HeldRecord['source']) => [
  ...new Set(records.filter((r) => r.source === source && r.recordId !== null).map((r) => Number(r.recordId))),
];

/**
 * A dataset identity names the person when one of its parts (the identity columns' values, lower case) is
 * one of their identifiers, when it is the id of one of their catalog records in a dataset keyed by that
 * id, or when the row it delivered is a stored row that holds them. One pass over `dataset_item`.
 */
async function datasetIdentities(
  tx: Executor,
  person: readonly NormalIdentifier[],
  held: Pick<Held, 'people' | 'properties' | 'runRows'>,
): Promise<DatasetIdentity[]> {
  const values = JSON.stringify(person.map((p) => p.value));
  const rows = JSON.stringify(held.runRows.map((r) => [r.runId, r.seq]));
  const keys = JSON.stringify(
    Object.entries(CATALOG_ID_IDENTITIES).flatMap(([tool, keysOf]) => keysOf(held).map((key) => [tool, key])),
  );
  const found = (await tx.execute(sql`
    select di.account_id as "accountId", di.dataset, d.tool, di.key, di.delivered_at as "deliveredAt"
    from dataset_item di join account_dataset d on d.account_id = di.account_id and d.name = di.dataset
    where string_to_array(di.key, chr(31)) && array(select json_array_elements_text(${values}::json))
      or (di.run_id, di.seq) in (select k ->> 0, (k ->> 1)::int from json_array_elements(${rows}::json) k)
      or (d.tool, di.key) in (select k ->> 0, k ->> 1 from json_array_elements(${keys}::json) k)
    order by di.account_id, di.dataset, di.key`)) as unknown as (DatasetIdentity & { deliveredAt: string | null })[];
  return found.map((i) => ({ ...i, deliveredAt: i.deliveredAt === null ? null : new Date(i.deliveredAt) }));
}

/**
 * The people catalog records name, by `<source>:<id>`, as compared: the name's words in lower case, in
 * order (`Doe, Jane` is `Jane Doe`). A stored run row names no one.
 */
async function namesOf(tx: Executor, records: readonly HeldRecord[]): Promise<Map<string, string>> {
  const keys = [...new Set(records.filter((r) => r.recordId !== null).map((r) => `${r.source}:${r.recordId}`))];
  if (keys.length === 0) return new Map();
  const rows = (await tx.execute(sql`
    select k.key, coalesce(
      (select p.first_name || ' ' || p.last_name from person p where k.source = 'person' and p.id = k.id),
      (select o.owner_name from property o where k.source = 'property' and o.id = k.id),
      (select h.name from rental_host h where k.source = 'rental_host' and h.id = k.id)) as name
    from (select e as key, split_part(e, ':', 1) as source, split_part(e, ':', 2)::bigint as id
          from json_array_elements_text(${JSON.stringify(keys)}::json) e) k`)) as unknown as {
    key: string;
    name: string | null;
  }[];
  const words = (name: string) =>
    name
      .normalize('NFKC')
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean)
      .sort()
      .join(' ');
  return new Map(rows.filter((r) => r.name && words(r.name)).map((r) => [r.key, words(r.name as string)]));
}

/**
 * The person's records among those the identifiers reach. An e-mail address is the person's: every
 * record holding it is theirs. A phone number whose catalog records name more than one person (an
 * office line, a family's landline) is *shared*: a record only it reaches may be someone else's, so it
 * is neither removed nor read out (the number is suppressed all the same, as a DROP cycle opts such a
 * person out). Answers the person's records and how many were left.
 */
async function theirs(tx: Executor, person: readonly NormalIdentifier[], reached: readonly FoundRecord[]) {
  const names = await namesOf(tx, reached);
  const byIdentifier = new Map<string, FoundRecord[]>();
  for (const r of reached) {
    const at = `${r.listType.toLowerCase()}:${r.hash}`;
    byIdentifier.set(at, [...(byIdentifier.get(at) ?? []), r]);
  }
  const key = (r: HeldRecord) => `${r.source}:${r.recordId ?? `${r.runId}:${r.seq}`}`;
  const own = new Map<string, HeldRecord>();
  for (const p of person) {
    const records = byIdentifier.get(`${p.listType}:${p.dropHash}`) ?? [];
    const named = new Set(records.map((r) => names.get(`${r.source}:${r.recordId}`)).filter(Boolean));
    if (p.kind === 'phone' && named.size > 1) continue;
    for (const r of records) own.set(key(r), { source: r.source, recordId: r.recordId, runId: r.runId, seq: r.seq });
  }
  return { records: [...own.values()], shared: new Set(reached.map(key)).size - own.size };
}

type FoundRecord = Awaited<ReturnType<typeof recordsHolding>>[number];

/** Everything held about the person the identifiers name, in `tx` (read before anything is removed). */
export async function findHeld(tx: Executor, person: readonly NormalIdentifier[]): Promise<Held> {
  const reached = await recordsHolding(
    tx,
    person.map((p) => ({ listType: p.listType, hash: p.dropHash })),
  );
  const { records, shared } = await theirs(tx, person, reached);
  const people = ids(records, 'person');
  const properties = ids(records, 'property');
  const runRows = [
    ...new Map(
      records
        .filter((r) => r.source === 'run_item' && r.runId !== null && r.seq !== null)
        .map((r) => [`${r.runId}\u0000${r.seq}`, { runId: r.runId as string, seq: Number(r.seq) }]),
    ).values(),
  ];
  const runIds = [...new Set(runRows.map((r) => r.runId))];
  const [runs, deliveredLeads, identities, enrichmentJobs] = await Promise.all([
    runIds.length === 0
      ? []
      : (tx.execute(sql`select id, account_id as "accountId" from run where id in ${runIds}`) as unknown as Promise<
          Held['runs']
        >),
    people.length === 0
      ? []
      : (tx.execute(sql`select account_id as "accountId", person_id::int as "personId" from delivered_lead
          where person_id in ${people}`) as unknown as Promise<Held['deliveredLeads']>),
    datasetIdentities(tx, person, { people, properties, runRows }),
    enrichmentJobsNaming(tx, person),
  ]);
  const accounts = new Set([
    ...runs.map((r) => r.accountId),
    ...deliveredLeads.map((d) => d.accountId),
    ...identities.map((i) => i.accountId),
    ...enrichmentJobs.map((j) => j.accountId),
  ]);
  return {
    records,
    shared,
    people,
    properties,
    hosts: ids(records, 'rental_host'),
    runRows,
    runs: [...runs],
    deliveredLeads: [...deliveredLeads],
    identities,
    enrichmentJobs,
    accounts: [...accounts].sort(),
  };
}

/** Removes dataset identities (they are replaced by suppression entries of their accounts); how many went. */
export async function forgetIdentities(tx: Executor, identities: readonly DatasetIdentity[]): Promise<number> {
  if (identities.length === 0) return 0;
  const keys = JSON.stringify(identities.map((i) => [i.accountId, i.dataset, i.key]));
  const gone = (await tx.execute(sql`
    delete from dataset_item di using json_array_elements(${keys}::json) k
    where di.account_id = k ->> 0 and di.dataset = k ->> 1 and di.key = k ->> 2`)) as unknown as { count?: number };
  return gone.count ?? 0;
}

/**
 * What the held records say, for an access request: each catalog record with its fields, each stored
 * row with its run (tool, account, when it expires), the lead database's deliveries by account, and the
 * rows of enrichment jobs that name the person with their job (account, file, when its rows expire).
 */
export async function heldContents(tx: Executor, held: Held) {
  const keys = JSON.stringify(held.runRows.map((r) => [r.runId, r.seq]));
  const [people, propertyOwners, rentalHosts, runRows, deliveries] = await Promise.all([
    held.people.length === 0
      ? []
      : tx.execute(sql`
          select to_jsonb(p) - 'person_key' - 'company_industry' || jsonb_build_object('company',
            (select jsonb_build_object('id', c.id, 'name', c.name, 'domain', c.domain) from company c
             where c.id = p.company_id)) as record
          from person p where p.id in ${held.people} order by p.id`),
    held.properties.length === 0
      ? []
      : tx.execute(sql`
          select jsonb_build_object('id', id, 'street', street, 'city', city, 'state', state, 'zip', zip,
            'owner_name', owner_name, 'owner_mailing_address', owner_mailing_address,
            'owner_emails', owner_emails, 'owner_phones', owner_phones) as record
          from property where id in ${held.properties} order by id`),
    held.hosts.length === 0
      ? []
      : tx.execute(sql`select to_jsonb(h) as record from rental_host h where h.id in ${held.hosts} order by h.id`),
    held.runRows.length === 0
      ? []
      : tx.execute(sql`
          select i.run_id as "runId", i.seq, r.tool, r.account_id as "accountId", r.created_at as "startedAt",
            r.expires_at as "expiresAt", i.data as row
          from run_item i join run r on r.id = i.run_id
          join json_array_elements(${keys}::json) k on i.run_id = k ->> 0 and i.seq = (k ->> 1)::int
          order by r.created_at, i.run_id, i.seq`),
    held.people.length === 0
      ? []
      : tx.execute(sql`
          select dl.account_id as "accountId", a.name as "accountName", dl.person_id::int as "personId",
            dl.delivered_at as "deliveredAt"
          from delivered_lead dl join account a on a.id = dl.account_id
          where dl.person_id in ${held.people} order by dl.delivered_at`),
  ]);
  const recordsOf = (rows: unknown) => (rows as { record: unknown }[]).map((r) => r.record);
  return {
    catalog: {
      people: recordsOf(people),
      propertyOwners: recordsOf(propertyOwners),
      rentalHosts: recordsOf(rentalHosts),
    },
    runRows: [...(runRows as unknown as Record<string, unknown>[])],
    deliveredLeads: [...(deliveries as unknown as Record<string, unknown>[])],
    enrichmentJobs: held.enrichmentJobs,
  };
}
