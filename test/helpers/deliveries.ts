import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { queueDeliveries } from '../../src/destinations/queue.ts';
import type { TestApp } from './app.ts';
import { waitFor } from './wait.ts';

/**
 * A finished run of `tool` holding `rows` as its items, written straight into the tables the engine
 * writes: the source of a delivery large enough (10,000 rows) that running a tool for it would only slow
 * the suite. Answers the run's id.
 */
export async function writeRun(
  t: Pick<TestApp, 'app'>,
  accountId: string,
  tool: string,
  rows: readonly Record<string, unknown>[],
) {
  const runId = `run_${randomBytes(8).toString('hex')}`;
  const sql = t.app.core.sql;
  await sql`
    insert into run (id, account_id, tool, status, input, item_count, handled, requested, finished_at, expires_at)
    values (${runId}, ${accountId}, ${tool}, 'SUCCEEDED', '{}', ${rows.length}, ${rows.length}, ${rows.length}, now(),
      now() + interval '30 days')`;
  for (let from = 0; from < rows.length; from += 2_000) {
    const page = JSON.stringify(rows.slice(from, from + 2_000));
    await sql`insert into run_item (run_id, seq, data)
      select ${runId}, ${from}::int + ord::int - 1, item from json_array_elements(${page}::json) with ordinality as t(item, ord)`;
  }
  return runId;
}

/** A person as the lead scraper gives one: row `i` of a set tagged `tag`. */
export const person = (tag: string, i: number) => ({
  first_name: `First${i}`,
  last_name: `Last${i}`,
  full_name: `First${i} Last${i}`,
  title: 'Owner',
  email: `person${i}.${tag}@acme-${i % 50}.com`,
  phone: null,
  city: 'Denver',
  state: 'Colorado',
  country: 'United States',
  company_name: `Acme ${i % 50}`,
  company_domain: `acme-${i % 50}.com`,
});

/** Queues the delivery of a run to a destination, as a run's end does, and waits for it to reach `status`. */
export async function deliver(
  t: TestApp,
  key: string,
  accountId: string,
  runId: string,
  destinationId: string,
  status: string | RegExp = 'succeeded',
  timeoutMs = 60_000,
) {
  await t.app.core.db.transaction((tx) => queueDeliveries(t.app.core, tx, accountId, { runId }, [destinationId]));
  const delivery = await waitFor(
    async () => (await t.request('GET', `/api/v1/deliveries?runId=${runId}`, { key })).body.deliveries[0],
    (d) => (typeof status === 'string' ? d?.status === status : status.test(d?.status ?? '')),
    { timeoutMs, what: `the delivery of ${runId}` },
  );
  expect(delivery.destinationId).toBe(destinationId);
  return delivery as {
    id: string;
    status: string;
    message: string;
    total: number;
    sent: number;
    created: number;
    updated: number;
    skipped: number;
    failed: number;
  };
}

/** A delivery's log: the delivery and its refused and skipped rows. */
export async function deliveryLog(t: TestApp, key: string, id: string) {
  const answer = await t.request('GET', `/api/v1/deliveries/${id}`, { key });
  expect(answer.status, answer.text).toBe(200);
  return answer.body as {
    delivery: Record<string, unknown>;
    problems: { row: number; outcome: string; reason: string }[];
  };
}
