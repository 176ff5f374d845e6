/**
 * `download`: a finished run's rows as CSV, `GET /api/downloads/{runId}` from a gateway process,
 * against `psql \copy` of the same rows (the same columns, CSV with a header) to a file, side by side
 * in one run, for runs of 10,000, 100,000 and 1,000,000 rows.
 *
 *   - The rows: finished maps runs written directly (`generate_series`), every row with all 19 maps
 *     columns (some 480 bytes of JSON), on the bench's own Postgres; vacuumed and checkpointed first.
 *   - **A**: a gateway process of its own (`src/main.ts`, no worker) so that its memory is its own;
 *     the client (this process) streams the answer to a file.
 *   - **B**: `psql \copy (select <the columns> from run_item, json_to_record(data) … where run_id = …
 *     order by seq) to FILE with (format csv, header)`: what the database and a client do at the least
 *     (each row's JSON parsed once, as the gateway parses it; `data->>'col'` per column would parse it
 *     19 times and make the baseline 5× slower).
 *
 * Each size: one untimed pass of each, then rounds of A and B alternated (the order rotating). Both
 * files must hold the run's rows, a header and nothing else. The gateway's peak RSS during its
 * downloads is Linux's VmHWM, reset before each download (`clear_refs`), or sampled where that is not
 * allowed. Goals: A ≤ 2× B at 1,000,000 rows; the gateway's memory flat: its peak at 1,000,000 rows
 * within 1.25× the highest of its peaks at the smaller sizes (memory that grew with the rows would
 * add some 500 MB from 100,000 to 1,000,000).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { connect, type Sql } from '../../db/client.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import { getTool } from '../../src/tools/index.ts';
import { median, n, openBenchServer, pad, progress, round, verdict, type Suite } from './harness.ts';

const SIZES = [10_000, 100_000, 1_000_000];
const ROUNDS: Record<number, number> = { 10000: 5, 100000: 5, 1000000: 3 };
const GOAL_RATIO = 2;
const GOAL_MEMORY = 1.25;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface SizeFigures {
  rows: number;
  bytes: { gateway: number; psql: number };
  /** Seconds per round, in the order measured. */
  gatewaySecs: number[];
  psqlSecs: number[];
  /** Medians of the rounds. */
  gateway: number;
  psql: number;
  ratio: number;
  rowsPerSec: number;
  /** The gateway process's peak RSS over its downloads of this size, and its RSS before them, MB. */
  peakRssMb: number;
  idleRssMb: number;
}

export interface DownloadResult {
  psql: string;
  memoryProbe: 'VmHWM reset per download' | 'VmRSS sampled every 10 ms';
  sizes: SizeFigures[];
  /** The largest size's peak ÷ the highest peak of the smaller sizes. */
  memoryGrowth: number;
}

// ---------------------------------------------------------------------------------------------

const run = (cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(cmd, args, { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => resolve({ code: -1, stdout, stderr: String(err) }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

/** Finished maps runs of `sizes` rows for one account, every row with all the maps columns. */
async function writeRuns(sql: Sql, accountId: string, sizes: number[]): Promise<Map<number, string>> {
  const ids = new Map<number, string>();
  for (const rows of sizes) {
    const runId = `benchdownload${rows}`;
    progress(`download: writing a run of ${n(rows)} rows`);
    await sql`
      insert into run (id, account_id, tool, status, input, item_count, handled, requested, finished_at, expires_at)
      values (${runId}, ${accountId}, 'maps', 'SUCCEEDED', '{"searchStringsArray":["dentist"]}', ${rows}, ${rows}, ${rows}, now(), now() + interval '30 days')`;
    await sql`
      insert into run_item (run_id, seq, data)
      select ${runId}, i, json_build_object(
        'name', 'Dental Care ' || i, 'category', 'Dentist',
        'address', (100 + i % 9000) || ' Main Street, Suite ' || (i % 400) || ', Denver, CO 80' || lpad((i % 300)::text, 3, '0') || ', United States',
        'street', (100 + i % 9000) || ' Main Street, Suite ' || (i % 400), 'city', 'Denver', 'state', 'Colorado',
        'postal_code', '80' || lpad((i % 300)::text, 3, '0'), 'country_code', 'US',
        'phone', '+1 303-555-' || lpad((i % 10000)::text, 4, '0'), 'website', 'https://dental-care-' || i || '.example.com/',
        'emails', json_build_array('office@dental-care-' || i || '.example.com', 'billing@dental-care-' || i || '.example.com'),
        'rating', round((3 + (i % 20) / 10.0)::numeric, 1), 'review_count', i % 2000,
        'hours', json_build_array('Monday: 8 AM–5 PM', 'Tuesday: 8 AM–5 PM', 'Wednesday: 8 AM–5 PM'),
        'latitude', 39.7 + (i % 1000) / 10000.0, 'longitude', -104.9 - (i % 1000) / 10000.0,
        'place_id', 'ChIJ' || md5(i::text), 'url', 'https://www.google.com/maps/place/?q=place_id:ChIJ' || md5(i::text),
        'search_term', 'dentist')
      from generate_series(0, ${rows - 1}) as i`;
    ids.set(rows, runId);
  }
  progress('download: vacuum and checkpoint');
  await sql`vacuum analyze run_item`;
  await sql`checkpoint`;
  return ids;
}

interface GatewayProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** The gateway in a process of its own (no worker), over `databaseUrl`. */
function spawnGateway(databaseUrl: string): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      LEADGATE_INLINE_WORKER: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '1000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /leadgate is listening on (\S+)/.exec(out)?.[1];
      if (url) {
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({
          url,
          child,
          stop: () =>
            new Promise<void>((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before it listened: ${out}`)));
  });
}

/** The gateway's resident memory, MB: now, and its peak since the last reset (Linux). */
async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** Measures the peak RSS of `pid` over `work`: VmHWM reset first where allowed, else VmRSS sampled. */
async function peakDuring(
  pid: number,
  work: () => Promise<void>,
  probe: DownloadResult['memoryProbe'],
): Promise<number> {
  if (probe === 'VmHWM reset per download') {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    await work();
    return (await memoryOf(pid)).hwm;
  }
  let peak = (await memoryOf(pid)).rss;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await memoryOf(pid)).rss);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  try {
    await work();
  } finally {
    sampling = false;
    await sampler;
  }
  return peak;
}

/** Streams GET `url` to `file`; refuses anything but 200. */
function fetchToFile(url: string, apiKey: string, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { authorization: `Bearer ${apiKey}` }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`download answered ${res.statusCode}`));
        return;
      }
      pipeline(res, createWriteStream(file)).then(resolve, reject);
    });
    request.on('error', reject);
  });
}

/** Lines of a file whose cells hold no line break: the header and one per row. */
async function lineCount(file: string): Promise<number> {
  const out = await run('wc', ['-l', file]);
  return Number(out.stdout.trim().split(/\s+/)[0]);
}

export const download: Suite<DownloadResult> = {
  name: 'download',
  key: 'download',
  flags: ['download-rows'],
  async run(context) {
    const largest = context.count('download-rows') ?? SIZES.at(-1)!;
    const sizes = [...new Set([...SIZES.filter((s) => s < largest), largest])];
    const psqlVersion = (await run('psql', ['--version'])).stdout.trim();
    if (!psqlVersion) throw new Error('download: psql not found on PATH (the baseline is psql \\copy)');

    const server = await openBenchServer();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-download-'));
    let gateway: GatewayProcess | undefined;
    const databaseUrl = await server.createDatabase();
    const { sql, db } = connect(databaseUrl, { max: 2 });
    try {
      await migrateDatabase(databaseUrl);
      const { apiKey, account } = await createAccount(db, {
        name: 'download',
        plan: 'scale',
        creditsMicros: 1_000_000n,
      });
      const runs = await writeRuns(sql, account.id, sizes);
      gateway = await spawnGateway(databaseUrl);
      const probe: DownloadResult['memoryProbe'] = await writeFile(`/proc/${gateway.child.pid}/clear_refs`, '5').then(
        () => 'VmHWM reset per download' as const,
        () => 'VmRSS sampled every 10 ms' as const,
      );
      const columns = getTool('maps').columns;
      // Each row's JSON read once (json_to_record), as the gateway reads it; lists come out as JSON text.
      const select =
        `select ${columns.map((c) => `r."${c.key}" as "${c.header}"`).join(', ')} from run_item, ` +
        `json_to_record(data) as r(${columns.map((c) => `"${c.key}" text`).join(', ')}) where run_id = '%RUN%' order by seq`;

      const figures: SizeFigures[] = [];
      for (const rows of sizes) {
        const runId = runs.get(rows)!;
        const gatewayFile = path.join(dir, `gateway-${rows}.csv`);
        const psqlFile = path.join(dir, `psql-${rows}.csv`);
        const viaGateway = () => fetchToFile(`${gateway!.url}/api/downloads/${runId}?format=csv`, apiKey, gatewayFile);
        const viaPsql = async () => {
          const out = await run('psql', [
            databaseUrl,
            '-X',
            '-q',
            '-v',
            'ON_ERROR_STOP=1',
            '-c',
            `\\copy (${select.replace('%RUN%', runId)}) to '${psqlFile}' with (format csv, header)`,
          ]);
          if (out.code !== 0) throw new Error(`psql failed (exit ${out.code}): ${out.stderr.trim()}`);
        };
        progress(`download: ${n(rows)} rows, one untimed pass of each`);
        await viaGateway();
        await viaPsql();
        for (const [file, what] of [
          [gatewayFile, 'gateway'],
          [psqlFile, 'psql'],
        ] as const) {
          const lines = await lineCount(file);
          if (lines !== rows + 1)
            throw new Error(`download: the ${what} file of ${n(rows)} rows has ${n(lines)} lines`);
        }
        const bytes = { gateway: (await stat(gatewayFile)).size, psql: (await stat(psqlFile)).size };
        const idleRssMb = (await memoryOf(gateway.child.pid!)).rss;
        const gatewaySecs: number[] = [];
        const psqlSecs: number[] = [];
        let peakRssMb = 0;
        for (let round = 0; round < (ROUNDS[rows] ?? 3); round++) {
          const order = round % 2 === 0 ? (['gateway', 'psql'] as const) : (['psql', 'gateway'] as const);
          for (const which of order) {
            const started = process.hrtime.bigint();
            if (which === 'gateway')
              peakRssMb = Math.max(peakRssMb, await peakDuring(gateway.child.pid!, viaGateway, probe));
            else await viaPsql();
            const secs = Number(process.hrtime.bigint() - started) / 1e9;
            (which === 'gateway' ? gatewaySecs : psqlSecs).push(secs);
          }
          progress(
            `download: ${n(rows)} rows, round ${round + 1}: gateway ${gatewaySecs.at(-1)!.toFixed(2)} s, psql ${psqlSecs.at(-1)!.toFixed(2)} s`,
          );
        }
        await rm(gatewayFile, { force: true });
        await rm(psqlFile, { force: true });
        const a = median(gatewaySecs);
        const b = median(psqlSecs);
        figures.push({
          rows,
          bytes,
          gatewaySecs: gatewaySecs.map((s) => round(s, 3)),
          psqlSecs: psqlSecs.map((s) => round(s, 3)),
          gateway: round(a, 3),
          psql: round(b, 3),
          ratio: round(a / b, 2),
          rowsPerSec: Math.round(rows / a),
          peakRssMb: round(peakRssMb, 1),
          idleRssMb: round(idleRssMb, 1),
        });
      }
      const smaller = Math.max(...figures.slice(0, -1).map((f) => f.peakRssMb));
      return {
        psql: psqlVersion,
        memoryProbe: probe,
        sizes: figures,
        memoryGrowth: round(figures.at(-1)!.peakRssMb / smaller, 2),
      };
    } finally {
      await gateway?.stop();
      await sql.end();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
  format(r) {
    const widths = [11, 12, 12, 8, 12, 11, 11];
    const lines = [
      `## download: a run's rows as CSV, GET /api/downloads/{runId} (a gateway process) vs psql \\copy to a file (${r.psql})`,
      pad(['rows', 'gateway s', 'psql s', 'ratio', 'rows/s', 'peak RSS', 'idle RSS'], widths),
      ...r.sizes.map((s) =>
        pad(
          [
            n(s.rows),
            s.gateway.toFixed(3),
            s.psql.toFixed(3),
            `${s.ratio}×`,
            n(s.rowsPerSec),
            `${s.peakRssMb} MB`,
            `${s.idleRssMb} MB`,
          ],
          widths,
        ),
      ),
      '',
      ...r.sizes.map(
        (s) =>
          `  ${n(s.rows)} rows (${n(Math.round(s.bytes.gateway / 1e6))} MB vs ${n(Math.round(s.bytes.psql / 1e6))} MB): gateway ${s.gatewaySecs.join(', ')} s; psql ${s.psqlSecs.join(', ')} s`,
      ),
      `  memory: ${r.memoryProbe}; peak at the largest size ÷ the highest at the smaller ones: ${r.memoryGrowth}×`,
    ];
    const goals = download.goals!(r) as Record<string, { ok: boolean }>;
    lines.push(
      `goal: ≤ ${GOAL_RATIO}× psql at ${n(r.sizes.at(-1)!.rows)} rows: ${verdict(goals.ratio!.ok)}; memory flat (peak ≤ ${GOAL_MEMORY}× the smaller runs'): ${verdict(goals.memory!.ok)}`,
    );
    return lines.join('\n');
  },
  goals(r) {
    const last = r.sizes.at(-1)!;
    return {
      ratio: {
        goal: `≤ ${GOAL_RATIO}× psql \\copy at ${last.rows} rows`,
        value: last.ratio,
        ok: last.ratio <= GOAL_RATIO && last.rows >= 1_000_000,
      },
      memory: {
        goal: `peak RSS at ${last.rows} rows ≤ ${GOAL_MEMORY}× the highest peak at fewer rows`,
        value: r.memoryGrowth,
        ok: r.memoryGrowth <= GOAL_MEMORY,
      },
    };
  },
};
