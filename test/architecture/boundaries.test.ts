import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.ts';

/** The layer rules (.dependency-cruiser.cjs), as dependency-cruiser reads them. */
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const CODE = ['src', 'schema', 'db', 'workers'];
/** A tree that breaks each rule once (test/fixtures/layers/README.md). */
const BROKEN = path.join(ROOT, 'test/fixtures/layers');

async function cruiseTree(baseDir: string, withTsConfig: boolean): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(CONFIG);
  const { output } = await cruise(
    CODE.filter((dir) => statSync(path.join(baseDir, dir), { throwIfNoEntry: false })?.isDirectory()),
    { ...options, validate: true, baseDir, ...(withTsConfig ? {} : { tsConfig: undefined }) },
    undefined,
    withTsConfig ? { tsConfig: extractTSConfig(path.join(ROOT, 'tsconfig.json')) } : undefined,
  );
  return output as ICruiseResult;
}

const describeViolation = (v: IViolation) =>
  `${v.rule.name}: ${[v.from, ...(v.cycle?.map((c) => c.name) ?? [v.to])].join(' -> ')}`;

let rules: string[];
let house: ICruiseResult;
let broken: ICruiseResult;

beforeAll(async () => {
  const options = await extractDepcruiseOptions(CONFIG);
  rules = [...new Set((options.ruleSet?.forbidden ?? []).map((rule) => rule.name!))];
  [house, broken] = await Promise.all([cruiseTree(ROOT, true), cruiseTree(BROKEN, false)]);
}, 120_000);

/** src, schema, db and workers: no import cycle, and every import goes the way the layers allow. */
describe('dependency direction (dependency-cruiser, .dependency-cruiser.cjs)', () => {
  it('cruises the whole house', () => {
    expect(house.summary.totalCruised).toBeGreaterThan(150);
    expect(rules).toEqual(
      expect.arrayContaining([
        'no-circular',
        'db-imports-no-src',
        'data-layer-imports-no-application',
        'data-layer-imports-no-face',
        'domains-import-no-face',
        'shared-imports-no-domain',
        'shared-imports-no-seed',
        'sources-import-no-implementation',
        'billing-imports-no-runs',
        'run-engine-through-its-front',
      ]),
    );
  });

  it('each rule reports the import that breaks it', () => {
    const reported = new Set(broken.summary.violations.map((v) => v.rule.name));
    for (const rule of rules) expect(reported.has(rule), rule).toBe(true);
  });

  it.each([
    'no-circular',
    'db-imports-no-src',
    'data-layer-imports-no-application',
    'data-layer-imports-no-face',
    'domains-import-no-face',
    'rest-imports-no-other-face',
    'mcp-imports-no-other-face',
    'cli-imports-no-other-face',
    'schema-imports-no-other-face',
    'console-routes-imports-no-other-face',
    'shared-imports-no-domain',
    'shared-imports-no-seed',
    'sources-import-no-implementation',
    'billing-imports-no-runs',
    'run-engine-through-its-front',
  ])('%s holds', (rule) => {
    expect(rules).toContain(rule);
    expect(house.summary.violations.filter((v) => v.rule.name === rule).map(describeViolation)).toEqual([]);
  });

  it('events, webhooks and src/workers are domains; the engine is called through its front', () => {
    const reported = broken.summary.violations.map(describeViolation);
    expect(reported).toEqual(
      expect.arrayContaining([
        'domains-import-no-face: src/events/bus.ts -> src/http/pipeline.ts',
        'domains-import-no-face: src/webhooks/deliver.ts -> src/rest/route.ts',
        'domains-import-no-face: src/workers/jobs.ts -> workers/task.ts',
        'run-engine-through-its-front: src/runs/follow.ts -> src/runs/engine/finish.ts',
      ]),
    );
    expect(reported).not.toContain('run-engine-through-its-front: src/runs/follow.ts -> src/runs/engine/index.ts');
  });

  it('no other rule is broken', () => {
    expect(house.summary.violations.map(describeViolation)).toEqual([]);
  });
});

function files(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    return statSync(path.join(ROOT, rel)).isDirectory() ? files(rel) : /\.(ts|mjs|js|sql)$/.test(rel) ? [rel] : [];
  });
}

describe('faces build no queries', () => {
  it.each(['src/rest', 'schema', 'workers'])('%s builds no queries (no drizzle-orm or postgres imports)', (dir) => {
    for (const file of files(dir).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(path.join(ROOT, file), 'utf8');
      expect(source, file).not.toMatch(/from '(drizzle-orm|postgres)(\/[^']*)?'/);
    }
  });
});

describe('graphile-worker through its public API only', () => {
  it('nothing reads graphile_worker._private_* tables (the jobs view and its functions are the API)', () => {
    for (const file of CODE.flatMap(files)) {
      const source = readFileSync(path.join(ROOT, file), 'utf8');
      expect(source, file).not.toMatch(/graphile_worker\s*\.\s*"?_private_/i);
    }
  });
});

describe('rooms a reader can hold', () => {
  const sources = () => ['src', 'schema'].flatMap(files).filter((f) => f.endsWith('.ts'));

  it('no file in src or schema is over 450 lines', () => {
    const long = sources().flatMap((file) => {
      const lines = readFileSync(path.join(ROOT, file), 'utf8').trimEnd().split('\n').length;
      return lines > 450 ? [`${file}: ${lines} lines`] : [];
    });
    expect(long).toEqual([]);
  });

  it('no line in src or schema is over 120 characters', () => {
    const wide = sources().flatMap((file) =>
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (line.length > 120 ? [`${file}:${i + 1}: ${line.length} characters`] : [])),
    );
    expect(wide).toEqual([]);
  });
});
