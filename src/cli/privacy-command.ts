import type { Command } from 'commander';
import type { Database, Sql } from '../../db/client.ts';
import { runDropCycle, type DropCycleSummary } from '../privacy/drop-cycle.ts';

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

export function registerPrivacyCommand(program: Command, withDatabase: WithDatabase): void {
  const privacy = program.command('privacy').description('the rights of the people in the data (docs/privacy.md)');
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
