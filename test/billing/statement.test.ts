import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DENVER_DENTISTS, type LooseBody, startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * The statement (`Account.statement`): the ledger with a run's hold, release and charge as one line, each
 * line with the balance after it. Read over GraphQL after real runs, a purchase, and a run still holding
 * money; the lines are checked against each other and against the wallet.
 */

let t: TestApp;
let key: string;
let accountId: string;

beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key, accountId } = await t.account());
});
afterAll(() => t?.stop());

const LINES = `query ($after: String) { viewer { wallet { totalBalance } statement(first: 2, after: $after) {
  totalCount pageInfo { hasNextPage endCursor }
  nodes { kind amount balance held released charged stillHeld runId run { id cost } note entries } } } }`;

interface Line {
  kind: string;
  amount: string;
  balance: string;
  held: string;
  released: string;
  charged: string;
  stillHeld: string;
  runId: string | null;
  run: { id: string; cost: string | null } | null;
  note: string | null;
  entries: number;
}

/** Micro-dollars of a Money string, so sums are exact. */
const micros = (money: string) => {
  const negative = money.startsWith('-');
  const [whole = '0', fraction = ''] = money.replace('-', '').split('.');
  const value = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
  return negative ? -value : value;
};

/** Every line, page by page (2 a page), newest first; and the wallet's total as read with the first page. */
async function statement() {
  const lines: Line[] = [];
  let after: string | null = null;
  let total = 0;
  let wallet = '';
  do {
    const page: { body: LooseBody } = await t.graphql(key, LINES, { after });
    expect(page.body.errors).toBeUndefined();
    const { statement: s, wallet: w }: LooseBody = page.body.data.viewer;
    if (!after) wallet = w.totalBalance;
    total = s.totalCount;
    lines.push(...s.nodes);
    after = s.pageInfo.hasNextPage ? s.pageInfo.endCursor : null;
  } while (after);
  return { lines, total, wallet };
}

describe('the statement', () => {
  it('shows each run as one line and a running balance that sums to the wallet', async () => {
    const runs: string[] = [];
    for (const max of [3, 5]) {
      const { start, status } = await t.runTool(key, '/api/v1/scrape/maps', {
        ...DENVER_DENTISTS,
        maxCrawledPlacesPerSearch: max,
      });
      expect(status.status).toBe('SUCCEEDED');
      runs.push(start.runId);
    }
    const bought = await t.graphql(key, 'mutation { buyCredits(amount: "20") { userErrors { code } } }');
    expect(bought.body.data.buyCredits.userErrors).toEqual([]);
    // A run still holding money: its hold is in the ledger and the wallet, nothing settled yet.
    await t.app.core.sql`insert into ledger_entry (account_id, kind, run_id, plan_micros, note)
      values (${accountId}, 'hold', 'InFlightRun000001', -2500000, 'reserved at start')`;
    await t.app.core.sql`update wallet set plan_micros = plan_micros - 2500000 where account_id = ${accountId}`;

    const { lines, total, wallet } = await statement();
    expect(lines.map((l) => l.kind)).toEqual(['RUN', 'PURCHASE', 'RUN', 'RUN', 'PLAN_GRANT']);
    expect(total).toBe(5);
    const [inFlight, purchase, second, first, grant] = lines as [Line, Line, Line, Line, Line];

    // Running balances: the newest is the wallet's; each is the one below plus its own amount.
    expect(micros(inFlight.balance)).toBe(micros(wallet));
    for (let i = 0; i < lines.length - 1; i += 1)
      expect(micros(lines[i]!.balance) - micros(lines[i + 1]!.balance)).toBe(micros(lines[i]!.amount));
    expect(grant.balance).toBe(grant.amount);

    // A settled run: hold, release and charge in one line, net of the charge, nothing still held.
    for (const [line, runId] of [
      [first, runs[0]],
      [second, runs[1]],
    ] as const) {
      expect(line.runId).toBe(runId);
      expect(line.run?.id).toBe(runId);
      expect(line.entries).toBe(micros(line.charged) > 0n ? 3 : 2);
      expect(micros(line.charged)).toBeGreaterThan(0n);
      expect(micros(line.amount)).toBe(-micros(line.charged));
      expect(micros(line.released)).toBe(micros(line.held));
      expect(micros(line.stillHeld)).toBe(0n);
      expect(micros(line.charged)).toBe(micros(line.run!.cost!));
    }
    expect(micros(second.charged)).toBeGreaterThan(micros(first.charged));

    // The run in flight shows its hold as still held.
    expect(inFlight).toMatchObject({ runId: 'InFlightRun000001', run: null, entries: 1 });
    expect(micros(inFlight.amount)).toBe(-2_500_000n);
    expect(micros(inFlight.stillHeld)).toBe(2_500_000n);
    expect(micros(purchase.amount)).toBeGreaterThanOrEqual(20_000_000n);
    expect(purchase.runId).toBeNull();
  });

  it('sums this month’s charges, leaving out holds and last month’s charges', async () => {
    const { apiKey, accountId: id } = await t.account();
    const spent = async () =>
      (await t.graphql(apiKey, '{ viewer { spentThisMonth } }')).body.data.viewer.spentThisMonth;
    expect(await spent()).toBe('0.00');
    const { start } = await t.runTool(apiKey, '/api/v1/scrape/maps', {
      ...DENVER_DENTISTS,
      maxCrawledPlacesPerSearch: 4,
    });
    const run = await t.graphql(apiKey, 'query($id: ID!) { run(id: $id) { cost } }', { id: start.runId });
    const cost: string = run.body.data.run.cost;
    expect(micros(cost)).toBeGreaterThan(0n);
    expect(micros(await spent())).toBe(micros(cost));
    // A charge made before this month began and a hold of a run in flight: neither is this month's spend.
    const month = new Date();
    const lastMonth = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1) - 1000);
    await t.app.core.sql`insert into ledger_entry (account_id, kind, run_id, plan_micros, note, created_at)
      values (${id}, 'charge', 'OldRun00000000001', -7000000, 'charged', ${lastMonth.toISOString()})`;
    await t.app.core.sql`insert into ledger_entry (account_id, kind, run_id, plan_micros, note)
      values (${id}, 'hold', 'InFlightRun000002', -3000000, 'reserved at start')`;
    expect(micros(await spent())).toBe(micros(cost));
  });

  it('orders lines by their entries’ ids as numbers, also across a power of ten', async () => {
    const { apiKey, accountId: id } = await t.account();
    // Entries written with ids of 10 and 11 digits: read as text, 9999999999 would come before 10000000001.
    for (const [entry, micros] of [
      [9_999_999_998n, 1_000_000n],
      [9_999_999_999n, 2_000_000n],
      [10_000_000_001n, 3_000_000n],
    ] as const)
      await t.app.core.sql`insert into ledger_entry (id, account_id, kind, plan_micros, note)
        overriding system value values (${String(entry)}, ${id}, 'refund', ${String(micros)}, 'numbered')`;
    await t.app.core.sql`update wallet set plan_micros = plan_micros + 6000000 where account_id = ${id}`;
    const page = async (after: string | null) =>
      (await t.graphql(apiKey, LINES, { after })).body.data.viewer.statement as {
        nodes: Line[];
        pageInfo: { endCursor: string; hasNextPage: boolean };
      };
    const first = await page(null);
    expect(first.nodes.map((l) => l.amount)).toEqual(['3.00', '2.00']);
    const second = await page(first.pageInfo.endCursor);
    expect(second.nodes.map((l) => l.amount)).toEqual(['1.00', expect.any(String)]);
    // Each balance is the one below plus its amount, across the pages.
    const lines = [...first.nodes, ...second.nodes];
    for (let i = 0; i < lines.length - 1; i += 1)
      expect(micros(lines[i]!.balance) - micros(lines[i + 1]!.balance)).toBe(micros(lines[i]!.amount));
  });

  it('refuses a cursor that is not one', async () => {
    const page = await t.graphql(key, LINES, { after: 'not a cursor' });
    expect(page.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  });
});
