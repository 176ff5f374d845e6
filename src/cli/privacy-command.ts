import { writeFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError } from 'commander';
import type { Database, Sql } from '../../db/client.ts';
import { runDropCycle, type DropCycleSummary } from '../privacy/drop-cycle.ts';
import { accessRequest, erasePerson } from '../privacy/erasure.ts';
import { listReceipts, type PersonIdentifier, type PrivacyReceipt, receiptAnswer } from '../privacy/requests.ts';
import { type ErrorDetail, ValidationError } from '../shared/errors.ts';

type WithDatabase = <T>(fn: (db: Database, sql: Sql) => Promise<T>) => Promise<T>;

const n = (value: number) => value.toLocaleString('en-US');

function describeCycle(s: DropCycleSummary): string {
  const lines = [
    `DROP ${s.name}${s.repeated ? ' (processed before: the statuses given then)' : ''}: ${n(s.workItems)} work items`,
    `  deleted ${n(s.deleted)}, opted out ${n(s.optedOut)}, not found ${n(s.notFound)}; ` +
      `${n(s.recordsDeleted)} records removed; ${n(s.removed)} withdrawn identifiers lifted`,
    ...s.responses.map((r) => `  response ${r.path} (${n(r.rows)} rows): upload it to DROP`),
  ];
  if (s.responses.length === 0) lines.push('  no list held requests: nothing to answer');
  return lines.join('\n');
}

const plural = (count: number, one: string, many = `${one}s`) => `${n(count)} ${count === 1 ? one : many}`;

/** A receipt in words: what was found or removed, and the identifiers' keyed hashes. */
export function describeReceipt(r: PrivacyReceipt): string {
  const c = r.counts;
  const verb = r.kind === 'erasure' ? 'removed' : 'held';
  return [
    `${r.kind} ${r.id} at ${r.createdAt.toISOString()}, requested by ${r.requestedBy}` +
      `${r.source === 'opt_out' ? ' (the person’s own opt-out)' : ''}${r.note ? `: ${r.note}` : ''}`,
    `  ${verb}: ${plural(c.people, 'person', 'people')} (${plural(c.deliveredLeads, 'delivered-lead record')}), ` +
      `${plural(c.propertyOwners, 'property owner')}, ${plural(c.rentalHosts, 'rental host')}, ` +
      `${plural(c.runRows, 'stored run row')} of ${plural(c.runs, 'run')}, ` +
      `${plural(c.datasetIdentities, 'dataset identity', 'dataset identities')}` +
      (c.enrichmentJobs ? `, the rows of ${plural(c.enrichmentJobs, 'enrichment job')}` : ''),
    r.kind === 'erasure'
      ? `  suppressed: ${plural(c.suppressions, 'entry', 'entries')} added, on the deployment’s list and those of ` +
        `${plural(c.accounts, 'account')} that held the person`
      : `  ${plural(c.accounts, 'account')} held the person; ` +
        `${plural(c.suppressions, 'suppression entry', 'suppression entries')}`,
    ...(c.shared > 0
      ? [`  left: ${plural(c.shared, 'record')} reached only through an identifier other people share`]
      : []),
    `  identifiers (keyed hashes): ${r.identifiers.map((i) => `${i.kind} ${i.hash}`).join(', ')}`,
  ].join('\n');
}

const collect = (value: string, previous: string[]) => [...previous, value];

function limit(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1000)
    throw new InvalidArgumentError('expected a number from 1 to 1000');
  return Number(value);
}

interface PersonOptions {
  email: string[];
  phone: string[];
  note?: string;
  requestedBy: string;
  json?: boolean;
}

/** The person the options name; a refused identifier is said by its option. */
async function forPerson<T>(opts: PersonOptions, fn: (identifiers: PersonIdentifier[]) => Promise<T>): Promise<T> {
  const identifiers = [
    ...opts.email.map((value) => ({ kind: 'email' as const, value })),
    ...opts.phone.map((value) => ({ kind: 'phone' as const, value })),
  ];
  if (identifiers.length === 0) throw new Error('name the person with --email or --phone (each may be repeated)');
  try {
    return await fn(identifiers);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const said = (err.details as ErrorDetail[] | undefined)?.map((d) => {
      const at = /^identifiers\.(\d+)\./.exec(d.path)?.[1];
      const identifier = at === undefined ? undefined : identifiers[Number(at)];
      return identifier ? `--${identifier.kind} ${identifier.value}: ${d.message}` : `${d.path}: ${d.message}`;
    });
    throw new Error(`${said?.join('; ') ?? err.message}; nothing was done`);
  }
}

function personOptions(command: Command): Command {
  return command
    .option('--email <address>', 'an e-mail address of the person (repeat for several)', collect, [])
    .option('--phone <number>', 'a phone number of the person, E.164 outside the US (repeatable)', collect, [])
    .option('--note <text>', 'why, for the receipt (write no identifier in it)')
    .option('--requested-by <who>', 'who asked, as the receipt records it', 'operator');
}

export function registerPrivacyCommand(program: Command, withDatabase: WithDatabase): void {
  const privacy = program.command('privacy').description('the rights of the people in the data (docs/privacy.md)');
  personOptions(
    privacy
      .command('erase')
      .description(
        'erase a person (GDPR art. 17): their catalog records, stored run rows, delivered-lead records and the ' +
          'dataset identities naming them; suppress them for good; print the receipt',
      ),
  )
    .option('--json', 'print the receipt as JSON')
    .action(async (opts: PersonOptions) => {
      const receipt = await forPerson(opts, (identifiers) =>
        withDatabase((db) =>
          erasePerson(db, { identifiers, source: 'erasure', requestedBy: opts.requestedBy, note: opts.note }),
        ),
      );
      console.log(opts.json ? JSON.stringify(receiptAnswer(receipt)) : describeReceipt(receipt));
    });
  personOptions(
    privacy
      .command('access')
      .description('answer an access request (GDPR art. 15): everything held about a person, as JSON, with a receipt'),
  )
    .option('--out <file>', 'write the JSON to this file (readable by its owner only); default stdout')
    .action(async (opts: PersonOptions & { out?: string }) => {
      const { receipt, data } = await forPerson(opts, (identifiers) =>
        withDatabase((db) => accessRequest(db, { identifiers, requestedBy: opts.requestedBy, note: opts.note })),
      );
      const json = JSON.stringify({ receipt: receiptAnswer(receipt), data }, null, 2);
      if (!opts.out) return console.log(json);
      await writeFile(opts.out, `${json}\n`, { mode: 0o600 });
      console.log(`${describeReceipt(receipt)}\n  written to ${opts.out}`);
    });
  privacy
    .command('receipts')
    .description('the receipts of erasures and access requests, newest first')
    .option('--limit <n>', 'how many (1 to 1000)', limit, 20)
    .option('--json', 'print them as JSON, one a line')
    .action(async (opts: { limit: number; json?: boolean }) => {
      const receipts = await withDatabase((db) => listReceipts(db, { limit: opts.limit }));
      if (receipts.length === 0 && !opts.json) return console.log('no privacy requests yet');
      for (const r of receipts) console.log(opts.json ? JSON.stringify(receiptAnswer(r)) : describeReceipt(r));
    });
  const drop = privacy.command('drop').description("California's Delete Request and Opt-out Platform (docs/drop.md)");
  drop
    .command('import')
    .description(
      'process a downloaded DROP archive: match its lists against the records held, delete or opt out the ' +
        'people found, suppress every identifier for good, and write the response files to upload',
    )
    .argument('<file>', 'the downloaded archive, <YYYYMMDD>_<DataBrokerId>_DROP.zip')
    .option('--out <path>', 'the response file (one list) or a folder; default the current directory')
    .option('--json', 'print the summary as JSON')
    .action(async (file: string, opts: { out?: string; json?: boolean }) => {
      const progress = process.stderr.isTTY
        ? (phase: string, done: number) => process.stderr.write(`\r\x1b[K${phase} ${n(done)}`)
        : undefined;
      const summary = await withDatabase((db) => runDropCycle(db, file, { out: opts.out, onProgress: progress }));
      if (progress) process.stderr.write('\r\x1b[K');
      console.log(opts.json ? JSON.stringify(summary) : describeCycle(summary));
    });
}
