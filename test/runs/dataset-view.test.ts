import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapsTool } from '../../src/tools/maps.ts';
import { appWithAccount, DENVER_DENTISTS, type TestApp } from '../helpers/app.ts';
import { runCount } from '../helpers/runs.ts';

/**
 * A run's rows as a dataset view: Run.results sorted by a declared column and narrowed by a search
 * (totalCount follows it), XLSX beside CSV, the run's log and starting it again with the same input.
 */

let t: TestApp;
let key: string;
let accountId: string;
let runId: string;
let rows: Record<string, unknown>[];

beforeAll(async () => {
  ({ t, key, accountId } = await appWithAccount());
  const ran = await t.runTool(key, '/api/v1/scrape/maps', DENVER_DENTISTS);
  runId = ran.start.runId;
  rows = ran.rows;
}, 60_000);
afterAll(() => t?.stop());

const RESULTS = `query DatasetView($id: ID!, $first: Int, $after: String, $orderBy: RunResultOrder, $search: String) {
  run(id: $id) {
    results(first: $first, after: $after, orderBy: $orderBy, search: $search) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { ... on MapsResult { placeId name reviewCount } }
    }
  }
}`;

type Node = { placeId: string; name: string; reviewCount: number | null };
const view = async (variables: Record<string, unknown>) => {
  const res = await t.graphql(key, RESULTS, { id: runId, ...variables });
  return res.body as {
    data: { run: { results: { totalCount: number; pageInfo: { endCursor: string }; nodes: Node[] } | null } };
    errors?: { message: string; extensions: { code: string } }[];
  };
};

/** Reads every page of a view, `first` rows at a time. */
async function everyPage(variables: Record<string, unknown>, first: number): Promise<Node[]> {
  const all: Node[] = [];
  let after: string | undefined;
  for (;;) {
    const { data } = await view({ ...variables, first, after });
    const results = data.run.results!;
    all.push(...results.nodes);
    if (all.length >= results.totalCount) return all;
    after = results.pageInfo.endCursor;
  }
}

describe('Run.results as a dataset view', () => {
  it('sorts by a column, numbers as numbers, empty values last either way, paging through the server', async () => {
    expect(rows.length).toBeGreaterThan(8);
    for (const direction of ['ASC', 'DESC'] as const) {
      const sorted = await everyPage({ orderBy: { column: 'review_count', direction } }, 4);
      expect(sorted).toHaveLength(rows.length);
      expect(new Set(sorted.map((n) => n.placeId)).size).toBe(rows.length);
      const counts = sorted.map((n) => n.reviewCount);
      const known = counts.filter((c): c is number => c !== null);
      expect(counts.slice(0, known.length)).toEqual(known);
      expect(known).toEqual([...known].sort((a, b) => (direction === 'ASC' ? a - b : b - a)));
    }
    const byName = (await view({ orderBy: { column: 'name' }, first: 100 })).data.run.results!.nodes.map((n) => n.name);
    expect(byName).toEqual([...byName].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase(), 'en')));
  });

  it('narrows by a search over the rows’ values, ignoring case; totalCount counts the matches', async () => {
    const word = String(rows[0]!.name).split(' ')[0]!;
    const expected = rows.filter((r) =>
      Object.values(r).some((v) => v !== null && JSON.stringify(v).toLowerCase().includes(word.toLowerCase())),
    );
    const found = (await view({ search: `  ${word.toUpperCase()} `, first: 100 })).data.run.results!;
    expect(found.totalCount).toBe(expected.length);
    expect(found.totalCount).toBeLessThan(rows.length);
    expect(found.nodes.map((n) => n.placeId)).toEqual(expected.map((r) => r.place_id));
    const none = (await view({ search: '%_no such text_%', first: 5 })).data.run.results!;
    expect(none).toMatchObject({ totalCount: 0, nodes: [] });
    // The plain path is unchanged: all rows in stored order, totalCount the run's.
    const plain = (await view({ first: 100 })).data.run.results!;
    expect(plain.totalCount).toBe(rows.length);
    expect(plain.nodes.map((n) => n.placeId)).toEqual(rows.map((r) => r.place_id));
  });

  it('refuses a column the tool does not declare, naming the ones it does; expired results still refuse', async () => {
    const refused = await view({ orderBy: { column: 'data; drop table run' }, first: 5 });
    expect(refused.data.run.results).toBeNull();
    expect(refused.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED');
    expect(refused.errors?.[0]?.message).toContain('rows have no column “data; drop table run”');
    expect(refused.errors?.[0]?.message).toContain('review_count');
    const long = await view({ search: 'x'.repeat(201), first: 5 });
    expect(long.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED');

    const other = await t.runTool(key, '/api/v1/scrape/maps', { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 2 });
    await t.app.core.sql`update run set expires_at = now() - interval '1 minute' where id = ${other.start.runId}`;
    const expired = await t.graphql(key, RESULTS, {
      id: other.start.runId,
      orderBy: { column: 'name' },
      search: 'a',
    });
    expect(expired.body.errors?.[0]?.extensions.code).toBe('RESULTS_EXPIRED');
    expect(expired.body.data.run.results).toBeNull();
  });

  it('declares human names and value words for the columns', async () => {
    const res = await t.graphql(
      key,
      `{ maps: tool(name: MAPS) { columns { key header label } }
         leads: tool(name: LEAD_SCRAPER) { columns { key label values { value label } } } }`,
    );
    const maps = res.body.data.maps.columns as { key: string; header: string; label: string }[];
    expect(maps.find((c) => c.key === 'place_id')).toEqual({ key: 'place_id', header: 'place_id', label: 'Place ID' });
    expect(maps.find((c) => c.key === 'review_count')?.label).toBe('Review count');
    const seniority = res.body.data.leads.columns.find((c: { key: string }) => c.key === 'seniority');
    expect(seniority.label).toBe('Seniority');
    expect(seniority.values).toContainEqual({ value: 'c_suite', label: 'C-suite' });
  });
});

describe('XLSX downloads', () => {
  /** The first sheet's rows as text, as the CSV writes its cells. */
  async function sheetRows(bytes: ArrayBuffer): Promise<string[][]> {
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(bytes);
    const sheet = workbook.worksheets[0]!;
    const out: string[][] = [];
    sheet.eachRow({ includeEmpty: true }, (row) => {
      const cells: string[] = [];
      for (let c = 1; c <= sheet.columnCount; c++) {
        const value = row.getCell(c).value;
        cells.push(value === null || value === undefined ? '' : String(value));
      }
      out.push(cells);
    });
    return out;
  }

  it('answers the CSV’s header and cells as a workbook, through REST and a signed link', async () => {
    const csv = parse((await t.request('GET', `/api/downloads/${runId}?format=csv`, { key })).text) as string[][];
    const res = await fetch(`${t.url}/api/downloads/${runId}?format=xlsx`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers.get('content-disposition')).toMatch(/filename="[^"]+\.xlsx"/);
    const sheet = await sheetRows(await res.arrayBuffer());
    expect(sheet[0]).toEqual(mapsTool.columns.map((c) => c.header));
    expect(sheet).toEqual(csv);

    const link = await t.graphql(key, `query($id: ID!) { run(id: $id) { downloadPath(format: XLSX) } }`, { id: runId });
    const signed = await fetch(`${t.url}${link.body.data.run.downloadPath}`);
    expect(signed.status).toBe(200);
    expect(await sheetRows(await signed.arrayBuffer())).toEqual(csv);
  });

  it('exports the audit log as a workbook too', async () => {
    const res = await fetch(`${t.url}/api/v1/audit-events/export?format=xlsx`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    const sheet = await sheetRows(await res.arrayBuffer());
    expect(sheet[0]?.slice(0, 3)).toEqual(['id', 'time', 'action']);
  });
});

describe('the run’s log and running it again', () => {
  it('tells the run’s life from its record', async () => {
    const res = await t.graphql(key, `query($id: ID!) { run(id: $id) { log { at kind message } } }`, { id: runId });
    const log = res.body.data.run.log as { at: string | null; kind: string; message: string }[];
    expect(log.map((e) => e.kind)).toEqual(['CREATED', 'STARTED', 'FINISHED', 'SETTLED', 'ROWS_DELETED']);
    expect(log.every((e) => e.at !== null)).toBe(true);
    expect(log[0]!.message).toMatch(/^Created by a start: 100 items asked for, [\d.]+ USD held\.$/);
    expect(log[2]!.message).toContain(`${rows.length} rows stored`);
    expect(log[2]!.message).toMatch(/^Succeeded: /);
  });

  it('starts the same tool with the same input; a dry run starts nothing', async () => {
    const before = await runCount(t.app.core.sql, accountId);
    const dry = await t.graphql(
      key,
      `mutation($id: ID!) { startRunAgain(id: $id, dryRun: true) { run { id } estimatedCost userErrors { code } } }`,
      { id: runId },
    );
    expect(dry.body.data.startRunAgain).toMatchObject({ run: null, userErrors: [] });
    expect(Number(dry.body.data.startRunAgain.estimatedCost)).toBeGreaterThan(0);
    expect(await runCount(t.app.core.sql, accountId)).toBe(before);

    const again = await t.graphql(
      key,
      `mutation($id: ID!) { startRunAgain(id: $id) { run { id tool input } userErrors { code message } } }`,
      { id: runId },
    );
    const started = again.body.data.startRunAgain;
    expect(started.userErrors).toEqual([]);
    expect(started.run.id).not.toBe(runId);
    const first = await t.graphql(key, `query($id: ID!) { run(id: $id) { input } }`, { id: runId });
    expect(started.run).toMatchObject({ tool: 'MAPS', input: first.body.data.run.input });
    await t.waitForRun(key, started.run.id);

    const missing = await t.graphql(key, `mutation { startRunAgain(id: "AAAAAAAAAAAAAAAAA") { userErrors { code } } }`);
    expect(missing.body.data.startRunAgain.userErrors).toEqual([{ code: 'NOT_FOUND' }]);
  });
});
