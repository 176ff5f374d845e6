import { createServer, connect as connectTcp, type AddressInfo } from 'node:net';
import { arrayOverlaps, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, openPool, planningDatabase, UNNAMED_IN_ONE_TRIP, type Database, type Sql } from '../../db/client.ts';
import { ledgerTable, walletTable } from '../../db/tables/accounts.ts';
import { homeServiceProTable } from '../../db/tables/home-services.ts';
import { localBusinessTable } from '../../db/tables/local-businesses.ts';
import { runTable } from '../../db/tables/runs.ts';
import { createCatalogReader } from '../../src/catalog/reader.ts';
import { createLogger } from '../../src/logger.ts';
import { plannedPerCall } from '../../src/catalog/sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

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
const preparedStatements = async () =>
  (await sql<{ statement: string }[]>`select statement from pg_prepared_statements`).map((r) => r.statement);

describe("drizzle's statements on the service's pool", () => {
  it('are prepared, in a transaction and a savepoint too, and answer as before', async () => {
    const none = await db.select({ id: runTable.id }).from(runTable).where(eq(runTable.id, 'run_none'));
    expect(none).toEqual([]);
    const [wallets, ledger] = await db.transaction(async (tx) => {
      const wallets = await tx
        .select({ accountId: walletTable.accountId })
        .from(walletTable)
        .where(eq(walletTable.accountId, 'acc_none'));
      const ledger = await tx.transaction(async (savepoint) =>
        savepoint.select({ id: ledgerTable.id }).from(ledgerTable).where(eq(ledgerTable.accountId, 'acc_none')),
      );
      return [wallets, ledger];
    });
    expect(wallets).toEqual([]);
    expect(ledger).toEqual([]);

    const prepared = await preparedStatements();
    expect(prepared).toContainEqual(expect.stringMatching(/from "run" where "run"\."id" = \$1/));
    expect(prepared).toContainEqual(expect.stringMatching(/from "wallet" where "wallet"\."account_id" = \$1/));
    expect(prepared).toContainEqual(
      expect.stringMatching(/from "ledger_entry" where "ledger_entry"\."account_id" = \$1/),
    );
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
    const places = await reader.db
      .select({ id: localBusinessTable.id })
      .from(localBusinessTable)
      .where(eq(localBusinessTable.city, 'Nowhere Springs'))
      .limit(1);
    expect(places).toEqual([]);
    expect(await preparedStatements()).not.toContainEqual(expect.stringMatching(/from "local_business"/));
    await reader.close();
  });
});

/**
 * A TCP relay to `url`'s server that reads what the client sends: the type of each message after the
 * startup message, in order. A statement that asks its parameter types sends Parse, Describe and
 * Flush, and waits for the answer before it sends Bind, Execute and Sync.
 */
async function relay(url: string) {
  const target = new URL(url);
  const sent: string[] = [];
  const server = createServer((client) => {
    const upstream = connectTcp(Number(target.port), target.hostname);
    let pending = Buffer.alloc(0);
    let started = false;
    client.on('data', (chunk) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const at = started ? 1 : 0;
        if (pending.length < at + 4) break;
        const end = at + pending.readInt32BE(at);
        if (pending.length < end) break;
        if (started) sent.push(String.fromCharCode(pending[0]!));
        pending = pending.subarray(end);
        started = true;
      }
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relayed = new URL(url);
  relayed.hostname = '127.0.0.1';
  relayed.port = String((server.address() as AddressInfo).port);
  return { url: relayed.toString(), sent, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("the catalog's statements", () => {
  it('go in one round trip when their values are text and numbers, and ask the types first for an array', async () => {
    const wire = await relay(database.url);
    const pool = openPool(wire.url, { max: 1 });
    try {
      const catalog = planningDatabase(pool);
      await pool`select 1`;
      const sent = async (work: () => Promise<unknown>) => {
        wire.sent.length = 0;
        await work();
        return wire.sent.join(' ');
      };
      // Parse, Describe, Bind, Execute, Sync at once: no Flush, so nothing waited for the types.
      expect(
        await sent(() =>
          catalog
            .select({ id: localBusinessTable.id })
            .from(localBusinessTable)
            .where(eq(localBusinessTable.city, 'Nowhere Springs'))
            .limit(3),
        ),
      ).toBe('P D B E S');
      expect(await sent(() => plannedPerCall(pool`select ${'Nowhere Springs'}::text as city, ${3}::int as n`))).toBe(
        'P D B E S',
      );
      // drizzle writes an array as its text.
      expect(
        await sent(() =>
          catalog
            .select({ id: homeServiceProTable.id })
            .from(homeServiceProTable)
            .where(arrayOverlaps(homeServiceProTable.serviceZips, ['80202'])),
        ),
      ).toBe('P D B E S');
      // A JavaScript array's text depends on its type: asked first, and answered right.
      let answer: unknown;
      expect(
        await sent(
          async () =>
            (answer = await pool.unsafe('select $1::text[] as list', [['a', 'b']] as never[], UNNAMED_IN_ONE_TRIP)),
        ),
      ).toBe('P D H B E S');
      expect(answer).toEqual([{ list: ['a', 'b'] }]);
      // And the answers are as they were.
      const [row] = await plannedPerCall(
        pool`select ${'a'}::text as t, ${41}::int + 1 as n, ${'{"k":1}'}::jsonb as j, ${null}::text as z`,
      );
      expect(row).toEqual({ t: 'a', n: 42, j: { k: 1 }, z: null });
    } finally {
      await pool.end();
      await wire.close();
    }
  });
});
