import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { leadgate, spawnService, type Service } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The fresh-machine path: no DATABASE_URL, so `npm start` boots an embedded Postgres under the
 * data directory, migrates, seeds, creates the demo account and prints its key.
 */
describe('npm start with no DATABASE_URL', () => {
  let dataDir: string;
  let server: Service | undefined;
  let port: number;

  /**
   * Starts `npm start` on a port it picks itself, in a process group of its own as from a terminal;
   * resolves with the banner once it is printed whole.
   */
  const start = async () => {
    server = spawnService(
      ['--import', 'tsx', 'src/main.ts'],
      { LEADGATE_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', DATABASE_URL: undefined },
      { detached: true },
    );
    const banner = await server.waitFor(/leadgate is listening on [\s\S]*(Try it:[\s\S]*-d '.*'\n|New key: .*\n)/);
    port = Number(/leadgate is listening on http:\/\/[^:]+:(\d+)/.exec(banner)![1]);
    return banner;
  };
  const stop = async () => {
    server!.kill('SIGTERM');
    const code = await server!.exited();
    server = undefined;
    return code;
  };

  afterAll(async () => {
    if (server) await stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('boots, prints a working key and curl, and serves a run end to end; a restart keeps the data', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-fresh-'));
    const banner = await start();
    expect(banner).toContain(`GraphQL + GraphiQL: http://localhost:${port}/graphql`);
    expect(banner).toContain(`REST base URL:      http://localhost:${port}/api/v1`);
    const apiKey = /(lg_live_[A-Za-z0-9]{32})/.exec(banner)![1]!;
    expect(banner).toContain(
      `curl -s -X POST http://localhost:${port}/api/v1/scrape/maps -H "Authorization: Bearer ${apiKey}"`,
    );

    const base = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const started = await (
      await fetch(`${base}/api/v1/scrape/maps`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          searchStringsArray: ['coffee shop'],
          locationQuery: 'Seattle, WA',
          maxCrawledPlacesPerSearch: 5,
        }),
      })
    ).json();
    const status = await waitFor(
      async () =>
        (await fetch(`${base}/api/v1/scrape/status/${started.runId}`, { headers: auth })).json() as Promise<{
          status: string;
        }>,
      (s) => s.status === 'SUCCEEDED',
      { intervalMs: 100, what: 'the run to succeed' },
    );
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: 5 });
    const csv = await (await fetch(`${base}/api/downloads/${started.runId}`, { headers: auth })).text();
    expect(csv.trim().split('\n')).toHaveLength(6);

    // The CLI talks to the instance the server started instead of starting a second one.
    const cli = await leadgate(['accounts', 'create', '--name', 'second', '--json'], {
      LEADGATE_DATA_DIR: dataDir,
      DATABASE_URL: '',
    });
    expect(cli.stderr).toBe('');
    const second = JSON.parse(cli.stdout).apiKey;
    expect((await fetch(`${base}/api/v1/runs/none`, { headers: { authorization: `Bearer ${second}` } })).status).toBe(
      404,
    );

    const first = server!;
    expect(await stop(), `the server's output: ${first.output().slice(-3000)}`).toBe(0);

    const again = await start();
    expect(again).toMatch(/Demo account: acc_\w+\. New key: npx leadgate keys create --account acc_\w+/);
    expect(again).not.toContain('lg_live_');
    const kept = await fetch(`http://127.0.0.1:${port}/api/v1/scrape/status/${started.runId}`, { headers: auth });
    expect((await kept.json()).status).toBe('SUCCEEDED');
  }, 120_000);

  it('Ctrl-C stops the gateway, its worker and then the database, and says goodbye in one line', async () => {
    dataDir ??= await mkdtemp(path.join(os.tmpdir(), 'leadgate-fresh-'));
    const banner = server ? server.output() : await start();
    const stopping = server!;
    // A terminal's Ctrl-C signals the foreground process group; under `npm start` npm passes it on once more.
    process.kill(-stopping.child.pid!, 'SIGINT');
    process.kill(-stopping.child.pid!, 'SIGINT');
    const code = await stopping.exited();
    server = undefined;
    const after = stopping.output().slice(banner.length);
    expect(code, `the server's output: ${stopping.output().slice(-3000)}`).toBe(0);
    // Nothing but the goodbye: no pool error from a database stopped under the gateway, no stack.
    expect(after.trim()).toBe('leadgate stopped (SIGINT): the gateway, then its worker, then the embedded database.');
    // The embedded database stopped too, cleanly: Postgres removes its pid file as it ends.
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 120_000);
});
