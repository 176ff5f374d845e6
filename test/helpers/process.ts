import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Completed {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npx leadgate …` (the package bin) and waits for it to exit, with all it printed. */
export function leadgate(args: string[], env: Record<string, string | undefined>): Promise<Completed> {
  const service = spawnService(['src/cli/leadgate.mjs', ...args], { LOG_LEVEL: process.env.LOG_LEVEL, ...env });
  return new Promise((resolve, reject) => {
    service.child.on('error', reject);
    void service.exited().then((code) => resolve({ code, stdout: service.stdout(), stderr: service.stderr() }));
  });
}

/** A child process of the project with everything it printed (stdout and stderr, in order). */
export interface Service {
  child: ChildProcess;
  output(): string;
  /** What it printed on stdout only. */
  stdout(): string;
  /** What it printed on stderr only. */
  stderr(): string;
  /** Resolves with the output so far once `pattern` appears in it (already there counts). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
  /** Resolves with the exit code (null when a signal ended it), once all it printed has been read. */
  exited(): Promise<number | null>;
}

/** A gateway process and the base URL it listens on. */
export type Gateway = Service & { url: string };

const running = new Set<Service>();

/**
 * Starts `node <args>` in the project root with `env` over this process's environment; tracked for `killServices`.
 * `detached`: in a process group of its own, as a command started from a terminal is, so that a test can
 * signal the whole group as Ctrl-C does (`process.kill(-child.pid, 'SIGINT')`).
 */
export function spawnService(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: { detached?: boolean } = {},
): Service {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    detached: options.detached ?? false,
  });
  let out = '';
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const append = (stream: 'stdout' | 'stderr') => (d: Buffer) => {
    const text = d.toString();
    out += text;
    if (stream === 'stdout') stdout += text;
    else stderr += text;
    for (const w of waiters) w();
  };
  child.stdout?.on('data', append('stdout'));
  child.stderr?.on('data', append('stderr'));
  // 'close' follows the exit once the output streams have ended: nothing printed is left out.
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const service: Service = {
    child,
    output: () => out,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(out)) return false;
          cleanup();
          resolve(out);
          return true;
        };
        const onExit = (code: number | null) => {
          if (check()) return;
          cleanup();
          reject(new Error(`exited with ${code} before ${pattern}; output: ${out.slice(-3000)}`));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern}; output: ${out.slice(-3000)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('exit', onExit);
        };
        if (check()) return;
        if (child.exitCode !== null || child.signalCode !== null) return onExit(child.exitCode);
        waiters.add(check);
        child.on('exit', onExit);
      });
    },
    kill: (signal = 'SIGTERM') => void child.kill(signal),
    exited: () => exit,
  };
  running.add(service);
  child.on('exit', () => running.delete(service));
  return service;
}

/** A gateway process (`src/main.ts`) on a port it picks itself; resolves once it listens, with its base URL. */
export async function spawnGateway(env: Record<string, string | undefined>): Promise<Gateway> {
  const service = spawnService(['--import', 'tsx', 'src/main.ts'], { PORT: '0', HOST: '127.0.0.1', ...env });
  const out = await service.waitFor(/leadgate is listening on (\S+)/);
  return Object.assign(service, { url: /leadgate is listening on (\S+)/.exec(out)![1]! });
}

/** A standalone worker process (`leadgate worker`, logging at info: its start is a log line); resolves once it has started. */
export async function spawnWorker(env: Record<string, string | undefined>): Promise<Service> {
  const service = spawnService(['src/cli/leadgate.mjs', 'worker'], { ...env, LOG_LEVEL: 'info' });
  await service.waitFor(/worker started/);
  return service;
}

/** Kills every service still running (SIGKILL unless given) and waits for them to exit. */
export async function killServices(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  const services = [...running];
  for (const s of services) s.kill(signal);
  await Promise.all(services.map((s) => s.exited()));
}
