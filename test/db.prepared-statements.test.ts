import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database, type Sql } from '../db/client.ts';
import { ledgerTable, walletTable } from '../db/schema/accounts.ts';
import { localBusinessTable } from '../db/schema/local-businesses.ts';
import { runTable } from '../db/schema/runs.ts';
import { createCatalogReader } from '../src/catalog/reader.ts';
import { createLogger } from '../src/logger.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

// One connection, so what it prepared is what pg_prepared_statements shows to the next statement.
let database: TestDatabase;
let sql: Sql;
let db: Database;
beforeAll(async () => {
  database = await createTestDatabase();
  ({ sql, db } = connect(database.url, { max: 1 }));
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

/** The statements the connection holds prepared, as Postgres has them. */
const preparedStatements = async () => (await sql<{ statement: string }[]>`select statement from pg_prepared_statements`).map((r) => r.statement);

describe("drizzle's statements on the service's pool", () => {
  it('are prepared, in a transaction and a savepoint too, and answer as before', async () => {
    const none = await db.select({ id: runTable.id }).from(runTable).where(eq(runTable.id, 'run_none'));
    expect(none).toEqual([]);
    const [wallets, ledger] = await db.transaction(async (tx) => {
      const wallets = await tx.select({ accountId: walletTable.accountId }).from(walletTable).where(eq(walletTable.accountId, 'acc_none'));
      const ledger = await tx.transaction(async (savepoint) => savepoint.select({ id: ledgerTable.id }).from(ledgerTable).where(eq(ledgerTable.accountId, 'acc_none')));
      return [wallets, ledger];
    });
    expect(wallets).toEqual([]);
    expect(ledger).toEqual([]);

    const prepared = await preparedStatements();
    expect(prepared).toContainEqual(expect.stringMatching(/from "run" where "run"\."id" = \$1/));
    expect(prepared).toContainEqual(expect.stringMatching(/from "wallet" where "wallet"\."account_id" = \$1/));
    expect(prepared).toContainEqual(expect.stringMatching(/from "ledger_entry" where "ledger_entry"\."account_id" = \$1/));
  });

  it('are prepared once per connection: the same statement again adds none', async () => {
    const byId = (statements: string[]) => statements.filter((s) => /from "run" where "run"\."id" = \$1/.test(s));
    await db.select({ id: runTable.id }).from(runTable).where(eq(runTable.id, 'run_a'));
    const before = await preparedStatements();
    expect(byId(before)).toHaveLength(1);
    await db.select({ id: runTable.id }).from(runTable).where(eq(runTable.id, 'run_b'));
    expect(await preparedStatements()).toEqual(before);
  });
});

describe("the catalog's drizzle on the same pool", () => {
  it('sends its statements unnamed, so each search is planned for its own values', async () => {
    const reader = createCatalogReader(sql, { url: undefined, maxLagMs: 0, logger: createLogger('silent') });
    const places = await reader.db.select({ id: localBusinessTable.id }).from(localBusinessTable).where(eq(localBusinessTable.city, 'Nowhere Springs')).limit(1);
    expect(places).toEqual([]);
    expect(await preparedStatements()).not.toContainEqual(expect.stringMatching(/from "local_business"/));
    await reader.close();
  });
});
