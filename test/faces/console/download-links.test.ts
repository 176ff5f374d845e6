import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantPlanCredits } from '../../../src/billing/wallet.ts';
import { DENVER_DENTISTS } from '../../helpers/app.ts';
import { startIdentityApp, type IdentityApp } from '../../helpers/identity.ts';
import { waitFor } from '../../helpers/wait.ts';
import { graphql } from '../../helpers/gql/index.ts';

const Viewer = graphql(`query DownloadLinksViewer { viewer { id } }`);
const StartMaps = graphql(
  `mutation DownloadLinksStartMaps($input: StartMapsScrapeInput!) { startMapsScrape(input: $input) { run { id } userErrors { code message } } }`,
);
const RunStatus = graphql(`query DownloadLinksRunStatus($id: ID!) { run(id: $id) { status } }`);
const Links = graphql(`
  query DownloadLinks($id: ID!) {
    run(id: $id) {
      csvPath: downloadPath(format: CSV)
      jsonPath: downloadPath(format: JSON)
      csvUrl: downloadUrl(format: CSV)
      outputUrl
    }
  }
`);

/** Where the gateway says it is, and is not: no one listens there. */
const PUBLIC_URL = 'https://leadgate.invalid';

/**
 * A console opened at another address than PUBLIC_URL (the gateway's own address here, as behind a
 * second host name, or before PUBLIC_URL was set) downloads files from the address it was opened at:
 * the console is given links as paths, resolved against the page's origin. Programs keep absolute
 * links at PUBLIC_URL.
 */
let t: IdentityApp;

beforeAll(async () => {
  t = await startIdentityApp({ publicUrl: PUBLIC_URL }, { worker: true });
});
afterAll(() => t?.stop());

describe('download links of the console', () => {
  it('download from the address the page was opened at, whatever PUBLIC_URL says', async () => {
    expect(new URL(t.url).origin).not.toBe(PUBLIC_URL);
    const browser = await t.signUp('ada@example.com');
    const accountId = (await browser.graphql(Viewer)).body.data!.viewer.id;
    await grantPlanCredits(t.app.core.db, accountId, 20_000_000n, 'credits for the test');
    const started = await browser.graphql(StartMaps, { input: DENVER_DENTISTS });
    expect(started.body.data!.startMapsScrape.userErrors).toEqual([]);
    const runId = started.body.data!.startMapsScrape.run!.id;
    await waitFor(
      async () => (await browser.graphql(RunStatus, { id: runId })).body.data!.run!.status,
      (status) => status === 'SUCCEEDED',
      { timeoutMs: 15_000, intervalMs: 100, what: `run ${runId} to succeed` },
    );

    const links = (await browser.graphql(Links, { id: runId })).body.data!.run!;
    expect(links.csvPath).toMatch(
      new RegExp(
        `^/api/downloads/${runId}\\?format=csv&account=${accountId}&expires=\\d+&by=usr_\\w+&signature=[\\w-]+$`,
      ),
    );
    // The page's own origin completes the path: the file comes without a key or a cookie.
    const csv = await fetch(new URL(links.csvPath!, t.url));
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/csv/);
    const json = await fetch(new URL(links.jsonPath!, t.url));
    expect(json.status).toBe(200);
    const rows = (await json.json()) as unknown[];
    expect(rows.length).toBeGreaterThan(0);
    expect((await csv.text()).trim().split('\n')).toHaveLength(rows.length + 1);

    // Absolute links stay at PUBLIC_URL: the same signed path there, and the keyed route.
    const csvUrl = new URL(links.csvUrl!);
    expect(csvUrl.origin).toBe(PUBLIC_URL);
    expect(csvUrl.pathname).toBe(`/api/downloads/${runId}`);
    expect(csvUrl.searchParams.get('signature')).toMatch(/^[\w-]+$/);
    expect(links.outputUrl).toBe(`${PUBLIC_URL}/api/downloads/${runId}`);
  });
});
