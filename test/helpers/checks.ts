/**
 * What `npm test` runs before the suites: lint, the two codegens, the type checks and the console's
 * build, each as soon as what it needs is done, so that on two cores the long type check runs beside
 * the other steps instead of after them. A codegen or type check whose inputs hash as at its last
 * success is not run again; the type checks are incremental (their state in node_modules/.cache/leadgate),
 * so after an edit they check again only what the edit can change. A failed step's output is printed
 * whole once the others have ended; the others print their time.
 *
 * `npm run checks` (`node --import tsx test/helpers/checks.ts`).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { chromiumMissing } from './chromium.ts';
import { ROOT } from './process.ts';

interface Step {
  name: string;
  /** Steps that must have succeeded first. */
  after: string[];
  /** Commands of node_modules/.bin, run one after the other. */
  commands: string[][];
  /**
   * The step is skipped when the files of `inputs` (files or folders, `exclude` left out) hash as they
   * did at its last success, and `made` (its output) exists.
   */
  skipWhenUnchanged?: { inputs: string[]; exclude?: string[]; made?: string };
}

/** What `tsc -p .` reads besides the installed packages: tsconfig.json's `include`. */
const TYPED = ['src', 'schema', 'db', 'workers', 'test', 'bench', 'drizzle.config.ts', 'vitest.config.ts'];
/** The configuration, and what the installed packages are (the lock file and the patches applied to them). */
const CONFIGS = ['tsconfig.json', 'package.json', 'package-lock.json', 'patches'];

const CACHE = 'node_modules/.cache/leadgate';

const STEPS: Step[] = [
  { name: 'lint', after: [], commands: [['biome', 'ci', '--error-on-warnings', '.']] },
  {
    name: 'codegen-tests',
    after: [],
    commands: [['graphql-codegen', '--config', 'test/helpers/codegen.ts']],
    skipWhenUnchanged: {
      inputs: ['schema/schema.graphql', 'test', 'package-lock.json'],
      exclude: ['test/helpers/gql'],
      made: 'test/helpers/gql',
    },
  },
  {
    name: 'codegen-console',
    after: [],
    commands: [['graphql-codegen', '--config', 'console/codegen.ts']],
    skipWhenUnchanged: {
      inputs: ['schema/schema.graphql', 'console/src', 'console/codegen.ts', 'package-lock.json'],
      exclude: ['console/src/gql'],
      made: 'console/src/gql',
    },
  },
  {
    name: 'tsc',
    after: ['codegen-tests'],
    commands: [['tsc', '--noEmit', '-p', '.', '--incremental', '--tsBuildInfoFile', `${CACHE}/tsc.tsbuildinfo`]],
    skipWhenUnchanged: { inputs: [...CONFIGS, ...TYPED], exclude: ['bench/results'] },
  },
  {
    name: 'tsc-console',
    after: ['codegen-console'],
    commands: [['tsc', '-p', 'console', '--incremental', '--tsBuildInfoFile', `${CACHE}/tsc-console.tsbuildinfo`]],
    // The console imports db/csv-cells.ts.
    skipWhenUnchanged: { inputs: [...CONFIGS, 'console', 'db'], exclude: ['console/dist'] },
  },
  {
    name: 'vite-build',
    after: ['codegen-console'],
    commands: [['vite', 'build', '--config', 'console/vite.config.ts', '--logLevel', 'warn']],
    skipWhenUnchanged: { inputs: [...CONFIGS, 'console', 'db'], exclude: ['console/dist'], made: 'console/dist' },
  },
];

/** Runs a command of node_modules/.bin in the project root; resolves with its exit code and all it printed. */
function run(command: string[]): Promise<{ code: number | null; output: string }> {
  const [bin, ...args] = command;
  return new Promise((resolve) => {
    const child = spawn(path.join(ROOT, 'node_modules/.bin', bin!), args, { cwd: ROOT });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.on('error', (err) => resolve({ code: 1, output: `${output}${err.message}\n` }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** A hash of the files of `inputs` (files or folders, walked whole), paths and contents, leaving out `exclude`. */
async function hashOf(inputs: string[], exclude: string[] = []): Promise<string> {
  const files: string[] = [];
  for (const input of inputs) {
    const at = path.join(ROOT, input);
    if (!(await stat(at)).isDirectory()) files.push(input);
    else
      for (const entry of await readdir(at, { recursive: true, withFileTypes: true }))
        if (entry.isFile()) files.push(path.relative(ROOT, path.join(entry.parentPath, entry.name)));
  }
  const hash = createHash('sha256');
  for (const file of files.filter((f) => !exclude.some((e) => f.startsWith(`${e}/`))).sort())
    hash.update(`${file}\0`).update(await readFile(path.join(ROOT, file)));
  return hash.digest('hex');
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function runStep(step: Step): Promise<{ ok: boolean; report: string }> {
  const at = Date.now();
  const skip = step.skipWhenUnchanged;
  const stamp = path.join(ROOT, CACHE, `${step.name}.sha256`);
  const inputs = skip && (await hashOf(skip.inputs, skip.exclude));
  const made = !skip?.made || existsSync(path.join(ROOT, skip.made));
  if (inputs && made && (await readFile(stamp, 'utf8').catch(() => '')) === inputs)
    return { ok: true, report: `${step.name}: inputs unchanged, not run` };
  await rm(stamp, { force: true });
  for (const command of step.commands) {
    const { code, output } = await run(command);
    if (code !== 0) return { ok: false, report: `${step.name}: ${command.join(' ')} exited ${code}\n${output}` };
  }
  if (inputs) {
    await mkdir(path.dirname(stamp), { recursive: true });
    await writeFile(stamp, inputs);
  }
  return { ok: true, report: `${step.name}: ${seconds(Date.now() - at)}` };
}

// The browser suites need Chromium: say so at once rather than after the checks and half the suites.
const noChromium = process.env.TEST_FAST === '1' ? undefined : chromiumMissing();
if (noChromium) {
  console.error(noChromium);
  process.exit(1);
}

const started = Date.now();
const done = new Map<string, Promise<boolean>>();
const failures: string[] = [];
for (const step of STEPS) {
  done.set(
    step.name,
    (async () => {
      const ready = await Promise.all(step.after.map((name) => done.get(name)!));
      if (!ready.every(Boolean)) return false;
      const { ok, report } = await runStep(step);
      if (ok) console.log(report);
      else failures.push(report);
      return ok;
    })(),
  );
}
await Promise.all(done.values());
for (const failure of failures) process.stderr.write(`\n${failure}`);
console.log(`checks: ${seconds(Date.now() - started)}${failures.length ? `, ${failures.length} failed` : ''}`);
process.exitCode = failures.length ? 1 : 0;
