/**
 * Lead database benchmark on its own: searches, deep paging and enrichment on a catalog seeded at
 * `large` (see bench/lib/database.ts). Prints a table and stores the figures under `databaseApis` in
 * bench/results/latest.json, where `npm run bench -- --only database` puts them (the top-level
 * `database` there names the Postgres of the other suites); the other keys are kept.
 *
 *   node --import tsx bench/database.ts [--scale small|medium|large] [--iterations N] [--reuse] [--data-dir DIR]
 *                                       [--shared-buffers SIZE|default] [--json FILE] [--no-save]
 *
 * --reuse keeps the seeded database for the next run (DATABASE_URL: database bench_leads_<scale>;
 * embedded: a Postgres kept in --data-dir, default .data/bench-database), so only the first run seeds.
 * --shared-buffers sets the embedded server's shared_buffers (default 1GB, enough to hold the lead
 * tables warm; `default` keeps Postgres' 128MB). --no-save leaves bench/results/latest.json alone (quick
 * checks at a smaller scale).
 */
import { readFlags, runStandalone } from './lib/cli.ts';
import { benchDatabase, formatDatabase, type DatabaseOptions } from './lib/database.ts';

const USAGE = 'usage: node --import tsx bench/database.ts [--scale small|medium|large] [--iterations N] [--reuse] [--data-dir DIR] [--shared-buffers SIZE|default] [--json FILE] [--no-save]';

const flags = readFlags(process.argv.slice(2), USAGE, {
  scale: { type: 'string' },
  iterations: { type: 'string' },
  reuse: { type: 'boolean' },
  'data-dir': { type: 'string' },
  'shared-buffers': { type: 'string' },
  'no-save': { type: 'boolean' },
});
const sharedBuffers = flags.values['shared-buffers'] as string | undefined;
const options: DatabaseOptions = {
  scale: flags.scale(),
  iterations: flags.count('iterations'),
  reuse: flags.values.reuse === true || undefined,
  dataDir: flags.values['data-dir'] as string | undefined,
  ...(sharedBuffers === undefined ? {} : { sharedBuffers: sharedBuffers === 'default' ? null : sharedBuffers }),
};

await runStandalone(() => benchDatabase(options), formatDatabase, {
  json: flags.json,
  save: flags.values['no-save'] ? false : { suite: 'database', key: 'databaseApis' },
});
