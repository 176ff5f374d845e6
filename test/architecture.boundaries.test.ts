import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/process.ts';

function files(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    return statSync(path.join(ROOT, rel)).isDirectory() ? files(rel) : rel.endsWith('.ts') ? [rel] : [];
  });
}

function imports(file: string): string[] {
  const source = readFileSync(path.join(ROOT, file), 'utf8');
  return [...source.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => path.normalize(path.join(path.dirname(file), m[1]!)));
}

/** Services, tools, sources and db hold the rules; they never depend on a face. */
describe('dependency direction', () => {
  const faces = ['schema', 'src/rest', 'src/mcp', 'src/cli', 'src/http', 'src/app.ts', 'src/main.ts', 'workers'];
  it.each(['src/runs', 'src/billing', 'src/accounts', 'src/catalog', 'src/endpoints', 'src/shared', 'src/tools', 'src/sources', 'db'])('%s imports no face', (dir) => {
    for (const file of files(dir)) {
      const bad = imports(file).filter((target) => faces.some((face) => target === face || target.startsWith(`${face}/`)));
      expect(bad, file).toEqual([]);
    }
  });

  it.each(['src/rest', 'schema', 'workers'])('%s builds no queries (no drizzle-orm or postgres imports)', (dir) => {
    for (const file of files(dir)) {
      const source = readFileSync(path.join(ROOT, file), 'utf8');
      expect(source, file).not.toMatch(/from '(drizzle-orm|postgres)(\/[^']*)?'/);
    }
  });
});
