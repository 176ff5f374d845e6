/**
 * Lead database benchmark on its own: searches, deep paging, lead enrichment and local-business
 * enrichment on a catalog seeded at `large` (see bench/lib/database.ts). Prints a table and stores
 * the figures under `databaseApis` in bench/results/latest.json, where `npm run bench -- --only
 * database` puts them (the top-level `database` there names the Postgres of the other suites); the
 * other keys are kept.
 *
 *   node --import tsx bench/database.ts [--scale small|medium|large] [--iterations N] [--reuse] [--data-dir DIR]
 *                                       [--shared-buffers SIZE|default] [--parts searches,paging,enrichment,places]
 *                                       [--json FILE] [--no-save]
 *
 * --reuse keeps the seeded database for the next run (DATABASE_URL: database bench_leads_<scale>;
 * embedded: a Postgres kept in --data-dir, default .data/bench-database), so only the first run seeds.
 * --shared-buffers sets the embedded server's shared_buffers (default 1GB, enough to hold the lead
 * tables warm; `default` keeps Postgres' 128MB). --no-save leaves bench/results/latest.json alone (quick
 * checks at a smaller scale). --parts runs only the parts named (default all four); such a partial run
 * prints its figures (and writes --json) but leaves bench/results/latest.json alone.
 */
import { readFlags, runStandalone } from './lib/cli.ts';
import { benchDatabase, DATABASE_PARTS, formatDatabase, type DatabaseOptions, type DatabasePart } from './lib/database.ts';

const USAGE =
  'usage: node --import tsx bench/database.ts [--scale small|medium|large] [--iterations N] [--reuse] [--data-dir DIR] [--shared-buffers SIZE|default] [--parts searches,paging,enrichment,places] [--json FILE] [--no-save]';

const flags = readFlags(process.argv.slice(2), USAGE, {
  scale: { type: 'string' },
  iterations: { type: 'string' },
  reuse: { type: 'boolean' },
  'data-dir': { type: 'string' },
  'shared-buffers': { type: 'string' },
  'no-save': { type: 'boolean' },
  parts: { type: 'string' },
});
const parts = (flags.values.parts as string | undefined)?.split(',').map((part) => part.trim());
const unknownPart = parts?.find((part) => !(DATABASE_PARTS as readonly string[]).includes(part));
if (unknownPart !== undefined) {
  console.error(`--parts: unknown part "${unknownPart}"; the parts are ${DATABASE_PARTS.join(', ')}\n${USAGE}`);
  process.exit(1);
}
const partial = parts !== undefined && DATABASE_PARTS.some((part) => !parts.includes(part));
const sharedBuffers = flags.values['shared-buffers'] as string | undefined;
const options: DatabaseOptions = {
  scale: flags.scale(),
  iterations: flags.count('iterations'),
  reuse: flags.values.reuse === true || undefined,
  dataDir: flags.values['data-dir'] as string | undefined,
  parts: parts as DatabasePart[] | undefined,
  ...(sharedBuffers === undefined ? {} : { sharedBuffers: sharedBuffers === 'default' ? null : sharedBuffers }),
};

await runStandalone(() => benchDatabase(options), formatDatabase, {
  json: flags.json,
  // Figures of some parts only would replace all of them in latest.json.
  save: flags.values['no-save'] || partial ? false : { suite: 'database', key: 'databaseApis' },
});
