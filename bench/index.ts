/** `npm run bench [-- --only a,b]`: the suites in the order they run; see docs/benchmarks.md. */
import { runSuites, type AnySuite } from './lib/harness.ts';
import { catalog } from './lib/catalog.ts';
import { database } from './lib/database.ts';
import { email } from './lib/email.ts';
import { graphqlResults } from './lib/graphql-results.ts';
import { graphqlRun } from './lib/graphql-run.ts';
import { destinations } from './lib/destinations.ts';
import { download } from './lib/download.ts';
import { limits } from './lib/limits.ts';
import { polling } from './lib/polling.ts';
import { pipeline } from './lib/pipeline.ts';
import { progress } from './lib/progress.ts';
import { subscribers } from './lib/subscribers.ts';
import { tools } from './lib/tools.ts';
import { upstream } from './lib/upstream.ts';
import { consoleFirstRow } from './console-first-row.ts';
import { processes } from './lib/processes.ts';
import { mcpAgentBytes } from './mcp-agent-bytes.ts';
import { privacy } from './lib/privacy.ts';
import { runRows } from './lib/run-rows.ts';
import { statement } from './lib/statement.ts';

const SUITES: AnySuite[] = [
  polling,
  progress,
  graphqlRun,
  graphqlResults,
  limits,
  catalog,
  database,
  email,
  tools,
  download,
  subscribers,
  upstream,
  consoleFirstRow,
  processes,
  mcpAgentBytes,
  pipeline,
  destinations,
  privacy,
  statement,
  runRows,
];

runSuites(
  SUITES,
  process.argv.slice(2),
  'catalog, database, tools and privacy seed the large catalog and take minutes',
).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
