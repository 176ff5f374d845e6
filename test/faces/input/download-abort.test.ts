import http from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../../db/client.ts';
import type { Run } from '../../../db/tables/runs.ts';
import { buildApp, type App } from '../../../src/app.ts';
import { loopbackConfig } from '../../../src/config.ts';
import { createAccount } from '../../../src/accounts/accounts.ts';
import { newRunId } from '../../../src/shared/ids.ts';
import { openExport } from '../../../src/runs/exports.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

/*
 * A download that fails part-way (the database connection reading its rows is lost) must not look
 * complete: the status line went out with the first bytes, so the connection is broken instead of the
 * chunked body being ended cleanly, and the failure is logged. A failure before the first byte is still
 * an error status.
 */

const ROWS = 25_000;
/**
 * About 50 MB of rows: more than the socket buffers can hold (Linux grows a loopback receive buffer up
 * to net.ipv4.tcp_rmem's maximum, 32 MB here, plus 4 MB of send buffer), so the export is still reading
 * rows, held back by the paused client, when the database session is ended.
 */
const ROW_TEXT = 'x'.repeat(2_000);

let database: TestDatabase;
let app: App;
let url: string;
let key: string;
let runId: string;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const config = loopbackConfig(database.url, 0, { authCacheSecs: 0 });
  const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
  app = await buildApp({ config, databaseUrl: database.url, logger, worker: false });
  url = await app.start(0, '127.0.0.1');
  const created = await createAccount(app.core.db, {
    name: 'download',
    plan: 'scale',
    subscriptionStatus: 'ACTIVE',
    creditsMicros: 0n,
  });
  key = created.apiKey;
  runId = newRunId();
  const sql = app.core.sql;
  await sql`insert into run (id, account_id, tool, status, status_message, input, requested, handled, item_count, started_at, finished_at, expires_at)
    values (${runId}, ${created.account.id}, 'maps', 'SUCCEEDED', 'Done', '{}'::jsonb, ${ROWS}, ${ROWS}, ${ROWS}, now(), now(), now() + interval '2 days')`;
  await sql`insert into run_item (run_id, seq, data)
    select ${runId}, i, jsonb_build_object('name', ${ROW_TEXT}::text || i, 'category', 'Dentist') from generate_series(0, ${ROWS - 1}) i`;
});
afterAll(async () => {
  await app?.stop();
  await database?.drop();
});

interface Transfer {
  status: number;
  bytes: number;
  /** The body ended as HTTP says it should (the last chunk of a chunked body arrived). */
  complete: boolean;
  /** The connection broke before that. */
  broken: boolean;
}

/**
 * Downloads the run; after the first bytes it pauses, ends the database session that streams the rows
 * (as a database restart or a lost connection would), then reads on.
 */
function downloadLosingTheDatabase(format: string): Promise<Transfer> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${url}/api/downloads/${runId}?format=${format}`,
      { headers: { authorization: `Bearer ${key}` } },
      (res) => {
        let bytes = 0;
        let cut = false;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (cut) return;
          cut = true;
          res.pause();
          void app.core.sql`
          select pg_terminate_backend(pid) as ended from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and query like 'select seq, data from run_item%'`.then(
            (rows) => {
              if (!rows.some((r) => r.ended === true)) reject(new Error('no database session was streaming the rows'));
              res.resume();
            },
            reject,
          );
        });
        let settled = false;
        const settle = (broken: boolean) => {
          if (settled) return;
          settled = true;
          resolve({ status: res.statusCode!, bytes, complete: res.complete, broken });
        };
        res.on('end', () => settle(false));
        res.on('aborted', () => settle(true));
        res.on('error', () => settle(true));
        res.on('close', () => settle(!res.complete));
      },
    );
    request.on('error', reject);
  });
}

describe('a download that loses its database part-way', () => {
  it.each(['json', 'csv'])('breaks the %s transfer instead of ending it cleanly, and logs it', async (format) => {
    const before = logLines.length;
    const transfer = await downloadLosingTheDatabase(format);
    expect(transfer.status).toBe(200);
    expect({ broken: transfer.broken, bytes: transfer.bytes, complete: transfer.complete }).toMatchObject({
      broken: true,
    });
    expect(transfer.complete).toBe(false);
    expect(transfer.bytes).toBeLessThan(ROWS * ROW_TEXT.length);
    const logged = logLines.slice(before).filter((line) => line.msg === 'download failed part-way; connection aborted');
    expect(logged).toEqual([expect.objectContaining({ level: 50, runId, url: `/api/downloads/${runId}` })]);
  });

  it('breaks a transfer whose rows end before the run’s count, whatever the driver reports', async () => {
    // A run that says it has 3 rows and has 2 (as a read cut short by a lost session looks to the export).
    const [owner] = await app.core.sql<{ account_id: string }[]>`select account_id from run where id = ${runId}`;
    const accountId = owner!.account_id;
    const short = newRunId();
    await app.core
      .sql`insert into run (id, account_id, tool, status, status_message, input, requested, handled, item_count, started_at, finished_at, expires_at)
      values (${short}, ${accountId}, 'maps', 'SUCCEEDED', 'Done', '{}'::jsonb, 3, 3, 3, now(), now(), now() + interval '2 days')`;
    await app.core
      .sql`insert into run_item (run_id, seq, data) values (${short}, 0, '{"name":"a"}'), (${short}, 1, '{"name":"b"}')`;
    for (const format of ['csv', 'ndjson']) {
      const before = logLines.length;
      const broken = await new Promise<boolean>((resolve, reject) => {
        http
          .get(
            `${url}/api/downloads/${short}?format=${format}`,
            { headers: { authorization: `Bearer ${key}` } },
            (res) => {
              res.resume();
              res.on('end', () => resolve(false));
              res.on('error', () => resolve(true));
              res.on('aborted', () => resolve(true));
            },
          )
          .on('error', reject);
      });
      expect(broken).toBe(true);
      expect(
        logLines.slice(before).filter((line) => line.msg === 'download failed part-way; connection aborted'),
      ).toHaveLength(1);
    }
  });

  it('still answers the next download in full', async () => {
    const res = await fetch(`${url}/api/downloads/${runId}?format=ndjson&offset=${ROWS - 2}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    expect((await res.text()).trim().split('\n')).toHaveLength(2);
  });
});

describe('a download that fails before its first byte', () => {
  it('rejects while an error status can still be answered', async () => {
    const [run] = await app.core.sql<Run[]>`select * from run where id = ${runId}`;
    const closed = connect(database.url, { max: 1 });
    await closed.sql.end();
    for (const format of ['csv', 'json', 'ndjson'] as const) {
      await expect(
        openExport(
          closed.sql,
          { ...run!, fileName: null } as Run,
          [{ key: 'name', header: 'Name', description: '' }],
          format,
        ),
      ).rejects.toThrow();
    }
  });
});
