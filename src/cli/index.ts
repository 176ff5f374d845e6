import { Command, InvalidArgumentError, Option } from 'commander';
import { connect, type Database, type Sql } from '../../db/client.ts';
import { PLANS, SUBSCRIPTION_STATUSES, type Plan, type SubscriptionStatus } from '../../db/tables/accounts.ts';
import { SCALES, seedCatalog, type Scale } from '../../db/seed/index.ts';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../database.ts';
import { createLogger } from '../logger.ts';
import { createAccount, createOperatorKey, getAccount, revokeApiKey, setPlan } from '../accounts/accounts.ts';
import { getBalances, grantPlanCredits } from '../billing/wallet.ts';
import { usdToMicros } from '../billing/money.ts';
import { registerImportCommand } from './import-command.ts';
import { registerPrivacyCommand } from './privacy-command.ts';
import { registerReportCommand } from './report-command.ts';

const config = loadConfig();
// The CLI prints results on stdout; logs go to stderr.
const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');

/**
 * Opens the configured database (applying pending migrations), runs `fn`, closes everything. `fn` gets
 * drizzle for the domains, and the pool itself for the catalog's loaders, whose statements are not
 * prepared (db/client.ts).
 */
async function withDatabase<T>(fn: (db: Database, sql: Sql) => Promise<T>): Promise<T> {
  const database = await openDatabase(config, logger);
  const { db, sql } = connect(database.url, { max: 2 });
  try {
    return await fn(db, sql);
  } finally {
    await sql.end();
    await database.stop();
  }
}

function dollars(value: string): string {
  if (!/^\d+(\.\d{1,6})?$/.test(value)) throw new InvalidArgumentError('expected a dollar amount such as 100 or 12.50');
  return value;
}

const program = new Command('leadgate').description('leadgate operator commands').showHelpAfterError();

const accounts = program.command('accounts').description('manage accounts');
accounts
  .command('create')
  .description('create an account and its first API key')
  .requiredOption('--name <name>', 'account name')
  .addOption(new Option('--plan <plan>', 'plan').choices(PLANS).default('starter'))
  .addOption(new Option('--status <status>', 'subscription status').choices(SUBSCRIPTION_STATUSES).default('ACTIVE'))
  .option('--credits <usd>', 'plan credits to grant, in USD', dollars, '0')
  .option('--json', 'print {"accountId", "apiKey"} as JSON')
  .action(async (opts: { name: string; plan: Plan; status: SubscriptionStatus; credits: string; json?: boolean }) => {
    const created = await withDatabase((db) =>
      createAccount(db, {
        name: opts.name,
        plan: opts.plan,
        subscriptionStatus: opts.status,
        creditsMicros: usdToMicros(opts.credits),
      }),
    );
    if (opts.json) console.log(JSON.stringify({ accountId: created.account.id, apiKey: created.apiKey }));
    else
      console.log(
        `account ${created.account.id} (${opts.plan}, ${opts.status})\nAPI key (shown once): ${created.apiKey}`,
      );
  });

accounts
  .command('grant')
  .description('grant plan credits to an account')
  .requiredOption('--account <id>', 'account id')
  .requiredOption('--credits <usd>', 'plan credits to add, in USD', dollars)
  .action(async (opts: { account: string; credits: string }) => {
    // Loaded here: the endpoint declarations weigh a second on every other command's start.
    const { walletView } = await import('../endpoints/api/account.ts');
    const wallet = await withDatabase((db) =>
      db.transaction(async (tx) => {
        await getAccount(tx, opts.account);
        await grantPlanCredits(tx, opts.account, usdToMicros(opts.credits), 'granted by an operator');
        return walletView(await getBalances(tx, opts.account));
      }),
    );
    console.log(JSON.stringify({ accountId: opts.account, wallet }));
  });
accounts
  .command('set-plan')
  .description("change an account's plan and, optionally, its subscription status")
  .requiredOption('--account <id>', 'account id')
  .addOption(new Option('--plan <plan>', 'plan').choices(PLANS).makeOptionMandatory())
  .addOption(new Option('--status <status>', 'subscription status').choices(SUBSCRIPTION_STATUSES))
  .action(async (opts: { account: string; plan: Plan; status?: SubscriptionStatus }) => {
    const account = await withDatabase((db) => setPlan(db, opts.account, opts.plan, opts.status));
    console.log(
      JSON.stringify({ accountId: account.id, plan: account.plan, subscriptionStatus: account.subscriptionStatus }),
    );
  });

const keys = program.command('keys').description('manage API keys');
keys
  .command('create')
  .description('create another API key for an account')
  .requiredOption('--account <id>', 'account id')
  .option('--json', 'print JSON')
  .action(async (opts: { account: string; json?: boolean }) => {
    const key = await withDatabase((db) => createOperatorKey(db, opts.account));
    if (opts.json) console.log(JSON.stringify({ accountId: opts.account, apiKey: key.apiKey, prefix: key.prefix }));
    else console.log(`API key (shown once): ${key.apiKey}`);
  });
keys
  .command('revoke')
  .description('revoke a key by its display prefix (the first 14 characters, e.g. lg_live_Ab12Cd)')
  .argument('<prefix>')
  .action(async (prefix: string) => {
    await withDatabase((db) => revokeApiKey(db, prefix));
    console.log(`revoked ${prefix}`);
  });

program
  .command('seed')
  .description(
    'fill the catalog deterministically with generated data (datasets that already hold rows are left alone)',
  )
  .addOption(
    new Option(
      '--scale <scale>',
      'size: small (seconds), medium, large (1,000,000 people), ' +
        'xlarge (10,000,000 people; about 10 minutes on 2 idle CPUs)',
    )
      .choices(Object.keys(SCALES))
      .default('small'),
  )
  .option(
    '--seed <n>',
    'generator seed; the same seed gives the same rows',
    (v) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError('expected a non-negative integer');
      return Number(v);
    },
    1,
  )
  .action(async (opts: { scale: Scale; seed: number }) => {
    const report = await withDatabase((_db, sql) =>
      seedCatalog(sql, { scale: opts.scale, seed: opts.seed, progress: true }),
    );
    console.log(JSON.stringify(report));
  });

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(async () => {
    await withDatabase(async () => {});
    console.log('migrations applied');
  });

program
  .command('worker')
  .description('run a standalone worker process (the gateway also runs one unless LEADGATE_INLINE_WORKER=false)')
  .action(async () => {
    const { createCore } = await import('../create-core.ts');
    const { startWorker } = await import('../../workers/index.ts');
    const database = await openDatabase(config, logger);
    const core = await createCore(config, database.url, createLogger(config.logLevel), { events: 'control' });
    const worker = await startWorker(core);
    // METRICS_PORT: this process's /metrics, /ready and /health (src/http/ops-server.ts).
    const ops =
      config.metricsPort === undefined
        ? undefined
        : await (await import('../http/ops-server.ts')).startOpsServer(core, worker, config.metricsPort);
    const stop = async () => {
      await ops?.close();
      await worker.stop();
      await core.close();
      await database.stop();
      process.exit(0);
    };
    process.on('SIGINT', () => void stop());
    process.on('SIGTERM', () => void stop());
  });

program
  .command('mcp')
  .description("serve the MCP tools over stdio to a local MCP client, through a leadgate server's REST API")
  .option('--url <url>', 'base URL of the leadgate server (default: $LEADGATE_URL)')
  .option('--key <key>', 'API key (default: $LEADGATE_API_KEY)')
  .option(
    '--tools <list>',
    'toolsets or tools to offer, comma-separated (default: $LEADGATE_TOOLS, or the default set)',
  )
  .option('--read-only', 'offer only the tools that change nothing')
  .action(async (opts: { url?: string; key?: string; tools?: string; readOnly?: boolean }) => {
    const { serveStdio } = await import('../mcp/stdio.ts');
    await serveStdio(opts);
  });

registerImportCommand(program, withDatabase);
registerReportCommand(program, withDatabase);
registerPrivacyCommand(program, withDatabase);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // What the database said, when that is the cause (an import's COPY refused by a constraint, say).
  const cause = (err as Error).cause instanceof Error ? `: ${((err as Error).cause as Error).message}` : '';
  process.stderr.write(`error: ${(err as Error).message}${cause}\n`);
  process.exit(1);
}
