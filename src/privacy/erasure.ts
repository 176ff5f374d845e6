/**
 * Requests from people, done (docs/privacy.md): an erasure (GDPR art. 17, or the person's own confirmed
 * opt-out) removes what is held about them and keeps them out for good; an access request (art. 15)
 * answers what is held. Each leaves a receipt (requests.ts) and, when the operator asked, an audit event,
 * in the same transaction as what it did.
 */
import { and, desc, eq, inArray, or } from 'drizzle-orm';
import { type Executor, runInTransaction, type Transaction } from '../../db/client.ts';
import { type PrivacyCounts, suppressionTable } from '../../db/tables/privacy.ts';
import { getInstallationSecret } from '../accounts/installation.ts';
import { recordAudit } from '../audit/audit.ts';
import { findHeld, forgetIdentities, type Held, heldContents } from './held.ts';
import { purgeEnrichmentJobs } from './enrichment-jobs.ts';
import { deleteRecords } from './identifier-index.ts';
import {
  type AccessRequest,
  checkRequester,
  type ErasureRequest,
  insertReceipt,
  newReceiptId,
  type NormalIdentifier,
  normalIdentifiers,
  personHashesOf,
  type PrivacyReceipt,
  receiptsNaming,
} from './requests.ts';
import { addSuppressions } from './suppression.ts';

export type { ErasureRequest, PersonIdentifier, PrivacyReceipt } from './requests.ts';

/** How a request's counts read what was held. */
function countsOf(held: Held): Omit<PrivacyCounts, 'suppressions'> {
  return {
    people: held.people.length,
    propertyOwners: held.properties.length,
    rentalHosts: held.hosts.length,
    runRows: held.runRows.length,
    runs: held.runs.length,
    deliveredLeads: held.deliveredLeads.length,
    datasetIdentities: held.identities.length,
    enrichmentJobs: held.enrichmentJobs.length,
    accounts: held.accounts.length,
    shared: held.shared,
  };
}

/** The operator's actor in the audit log, named as the receipt names who asked. */
const operatorActor = (requestedBy: string) => ({ type: 'operator' as const, id: null, label: requestedBy });

/** Removes each source's records; the counts of what was removed. */
async function removeRecords(tx: Transaction, held: Held) {
  const of = (source: Held['records'][number]['source']) => held.records.filter((r) => r.source === source);
  // In this order: a person's delivered-lead records go with them (the foreign key's cascade).
  const people = await deleteRecords(tx, of('person'));
  const propertyOwners = await deleteRecords(tx, of('property'));
  const rentalHosts = await deleteRecords(tx, of('rental_host'));
  const runRows = await deleteRecords(tx, of('run_item'));
  return { people, propertyOwners, rentalHosts, runRows };
}

/**
 * Erases the person the identifiers name, in one transaction: every record the identifier index finds
 * is removed (a catalog person with their delivered-lead records, a property's owner fields, a rental
 * host's name, e-mail and phone, stored run rows still within retention, the rows of enrichment jobs that
 * name them); the identities of accounts'
 * datasets that name them are removed; every account they were delivered to gets their identifiers on
 * its own list, and the deployment's list gets them too (`request.source`), so no import, upstream run,
 * enrichment or search brings them back. The identifiers are kept as DROP hashes (`hash` entries), never
 * in the clear. 400 `validation_failed` for an identifier that is none, before anything is done.
 * An operator's erasure (`source: 'erasure'`) records `privacy.erasure` for each identifier; a
 * person's own opt-out is recorded by the opt-out page (`privacy.opt_out`).
 */
export async function erasePerson(db: Executor, request: ErasureRequest): Promise<PrivacyReceipt> {
  const person = normalIdentifiers(request.identifiers);
  const { requestedBy, note } = checkRequester(request.requestedBy, request.note);
  if (request.source !== 'erasure' && request.source !== 'opt_out')
    throw new Error(`erasePerson: source ${String(request.source)} is not a person's request`);
  const secret = await getInstallationSecret(db);
  const id = newReceiptId();
  const entries = person.map((p) => ({ kind: 'hash' as const, value: p.entry }));
  const why = { note: `${request.source === 'opt_out' ? 'Opt-out' : 'Erasure'} ${id}` };
  return runInTransaction(db, async (tx) => {
    const held = await findHeld(tx, person);
    const removed = await removeRecords(tx, held);
    const enrichmentJobs = await purgeEnrichmentJobs(tx, held.enrichmentJobs);
    const datasetIdentities = await forgetIdentities(tx, held.identities);
    let suppressions = await addSuppressions(tx, null, entries, request.source, why);
    for (const accountId of held.accounts)
      suppressions += await addSuppressions(tx, accountId, entries, request.source, why);
    const receipt = await insertReceipt(tx, {
      id,
      kind: 'erasure',
      source: request.source,
      requestedBy,
      note,
      personHashes: personHashesOf(secret, person),
      counts: { ...countsOf(held), ...removed, datasetIdentities, enrichmentJobs, suppressions },
    });
    if (request.source === 'erasure') await auditErasure(tx, receipt, requestedBy);
    return receipt;
  });
}

async function auditErasure(tx: Transaction, receipt: PrivacyReceipt, requestedBy: string) {
  const { counts } = receipt;
  for (const identifier of receipt.identifiers)
    await recordAudit(tx, {
      accountId: null,
      actor: operatorActor(requestedBy),
      action: 'privacy.erasure',
      target: { type: 'privacy_request', id: receipt.id },
      details: {
        kind: identifier.kind,
        personHash: identifier.hash,
        catalogRows: counts.people + counts.propertyOwners + counts.rentalHosts,
        runRows: counts.runRows,
        datasetIdentities: counts.datasetIdentities,
      },
    });
}

/** The suppression entries (any list) that name the person: as an e-mail, a phone, or a DROP hash. */
function suppressionsOf(tx: Executor, person: readonly NormalIdentifier[]) {
  const t = suppressionTable;
  const byKind = (kind: 'email' | 'phone') => person.filter((p) => p.kind === kind).map((p) => p.value);
  const wanted = [
    ...(['email', 'phone'] as const).map((kind) =>
      byKind(kind).length > 0 ? and(eq(t.kind, kind), inArray(t.value, byKind(kind))) : undefined,
    ),
    and(
      eq(t.kind, 'hash'),
      inArray(
        t.value,
        person.map((p) => p.entry),
      ),
    ),
  ];
  return tx
    .select({
      id: t.id,
      accountId: t.accountId,
      kind: t.kind,
      value: t.value,
      source: t.source,
      note: t.note,
      createdAt: t.createdAt,
    })
    .from(t)
    .where(or(...wanted))
    .orderBy(desc(t.createdAt), desc(t.id));
}

/**
 * Answers what is held about the person the identifiers name (GDPR art. 15), as JSON: the catalog's
 * records with their fields, stored run rows with their run (tool, account), the accounts the lead
 * database delivered them to, the identities of accounts' datasets that name them, the rows of enrichment
 * jobs that name them, suppression entries, and the receipts of earlier requests for the same
 * identifiers; with its own receipt and audit event.
 */
export async function accessRequest(
  db: Executor,
  request: AccessRequest,
): Promise<{ receipt: PrivacyReceipt; data: unknown }> {
  const person = normalIdentifiers(request.identifiers);
  const { requestedBy, note } = checkRequester(request.requestedBy, request.note);
  const secret = await getInstallationSecret(db);
  const personHashes = personHashesOf(secret, person);
  return runInTransaction(db, async (tx) => {
    const held = await findHeld(tx, person);
    const [contents, suppressions, earlier] = await Promise.all([
      heldContents(tx, held),
      suppressionsOf(tx, person),
      receiptsNaming(tx, personHashes),
    ]);
    const receipt = await insertReceipt(tx, {
      id: newReceiptId(),
      kind: 'access',
      source: null,
      requestedBy,
      note,
      personHashes,
      counts: { ...countsOf(held), suppressions: suppressions.length },
    });
    const records =
      held.people.length +
      held.properties.length +
      held.hosts.length +
      held.runRows.length +
      held.enrichmentJobs.length;
    for (const identifier of receipt.identifiers)
      await recordAudit(tx, {
        accountId: null,
        actor: operatorActor(requestedBy),
        action: 'privacy.access_request',
        target: { type: 'privacy_request', id: receipt.id },
        details: { kind: identifier.kind, personHash: identifier.hash, records },
      });
    const data = {
      receiptId: receipt.id,
      answeredAt: receipt.createdAt,
      identifiers: person.map((p) => ({ kind: p.kind, value: p.value })),
      ...contents,
      datasetIdentities: held.identities,
      accounts: held.accounts,
      suppressions,
      earlierRequests: earlier,
    };
    return { receipt, data };
  });
}
