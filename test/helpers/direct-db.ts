import { connect, type Database, type Sql } from '../../db/client.ts';
import { runTable, type Run } from '../../db/tables/runs.ts';
import { createAccount, type CreateAccountInput } from '../../src/accounts/accounts.ts';
import { newRunId } from '../../src/shared/ids.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

/**
 * A database of its own (cloned from the template) with a connection and no gateway: for suites that
 * call services directly and read the tables themselves.
 */
export interface DirectDb {
  database: TestDatabase;
  sql: Sql;
  db: Database;
  /** An account with its wallet; plan credits in micro-dollars. */
  account(input?: Partial<CreateAccountInput>): Promise<string>;
  /** Inserts a run row as it is given (no hold, no job). */
  insertRun(values: Partial<typeof runTable.$inferInsert> & { accountId: string }): Promise<Run>;
  close(): Promise<void>;
}

export async function openDirectDb(): Promise<DirectDb> {
  const database = await createTestDatabase();
  const { sql, db } = connect(database.url, { max: 4 });
  return {
    database,
    sql,
    db,
    async account(input = {}) {
      const created = await createAccount(db, {
        name: 'test',
        plan: 'scale',
        subscriptionStatus: 'ACTIVE',
        creditsMicros: 0n,
        ...input,
      });
      return created.account.id;
    },
    async insertRun(values) {
      const [run] = await db
        .insert(runTable)
        .values({
          id: newRunId(),
          tool: 'maps',
          status: 'RUNNING',
          input: { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 10 },
          ...values,
        })
        .returning();
      return run!;
    },
    async close() {
      await sql.end();
      await database.drop();
    },
  };
}
