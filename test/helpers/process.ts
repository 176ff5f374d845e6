import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Completed {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npx leadgate …` (the package bin) and waits for it to exit. */
export function leadgate(args: string[], env: Record<string, string | undefined>): Promise<Completed> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/cli/leadgate.mjs', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A child process of the project with everything it printed (stdout and stderr, in order). */
export interface Service {
  child: ChildProcess;
  output(): string;
  /** Resolves with the output so far once `pattern` appears in it (already there counts). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
  /** Resolves with the exit code. */
  exited(): Promise<number | null>;
}

const running = new Set<Service>();

/** Starts `node <args>` in the project root with `env` over this process's environment; tracked for `killServices`. */
export function spawnService(args: string[], env: Record<string, string | undefined> = {}): Service {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info', ...env } });
  let out = '';
  const waiters = new Set<() => void>();
  const append = (d: Buffer) => {
    out += d.toString();
    for (const w of waiters) w();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const service: Service = {
    child,
    output: () => out,
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
        if (child.exitCode !== null) return onExit(child.exitCode);
        waiters.add(check);
        child.on('exit', onExit);
      });
    },
    kill: (signal = 'SIGTERM') => void child.kill(signal),
    exited: () => exited(child),
  };
  running.add(service);
  child.on('exit', () => running.delete(service));
  return service;
}

/** A gateway process (`src/main.ts`) on a port it picks itself; resolves once it listens, with its base URL. */
export async function spawnGateway(env: Record<string, string | undefined>): Promise<Service & { url: string }> {
  const service = spawnService(['--import', 'tsx', 'src/main.ts'], { PORT: '0', HOST: '127.0.0.1', ...env });
  const out = await service.waitFor(/leadgate is listening on (\S+)/);
  return Object.assign(service, { url: /leadgate is listening on (\S+)/.exec(out)![1]! });
}

/** A standalone worker process (`leadgate worker`); resolves once it has started. */
export async function spawnWorker(env: Record<string, string | undefined>): Promise<Service> {
  const service = spawnService(['src/cli/leadgate.mjs', 'worker'], env);
  await service.waitFor(/worker started/);
  return service;
}

/** Kills every service still running (SIGKILL unless given) and waits for them to exit. */
export async function killServices(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  const services = [...running];
  for (const s of services) s.kill(signal);
  await Promise.all(services.map((s) => s.exited()));
}

/** Resolves with the output so far once `pattern` appears on stdout. */
export function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; stdout: ${out}; stderr: ${err}`)), timeoutMs);
    child.stderr?.on('data', (d) => (err += d));
    child.stdout?.on('data', (d) => {
      out += d;
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ${pattern}; stdout: ${out}; stderr: ${err}`));
    });
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.on('exit', (code) => resolve(code));
  });
}
