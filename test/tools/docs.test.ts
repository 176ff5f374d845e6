import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderToolsDoc } from '../../src/tools/docs.ts';
import { TOOLS } from '../../src/tools/index.ts';
import { ROOT } from '../helpers/process.ts';

describe('docs/tools.md', () => {
  it('is the text generated from the tool registry (npm run docs:tools)', () => {
    expect(readFileSync(path.join(ROOT, 'docs/tools.md'), 'utf8')).toBe(renderToolsDoc());
  });

  it('documents every tool with its route, price and every result column', () => {
    const doc = renderToolsDoc();
    for (const tool of TOOLS) {
      expect(doc).toContain(`## ${tool.title}\n`);
      if (!tool.linkedOnly) expect(doc).toContain(`\`POST ${tool.rest.path}\``);
      expect(doc).toContain(tool.price.text);
      for (const column of tool.columns) expect(doc).toContain(`| \`${column.header}\` |`);
    }
  });
});

describe('the tool registry', () => {
  it('gives every tool unique names on every face', () => {
    const faces = TOOLS.filter((t) => !t.linkedOnly);
    for (const key of ['name'] as const) expect(new Set(TOOLS.map((t) => t[key])).size).toBe(TOOLS.length);
    expect(new Set(faces.flatMap((t) => [t.rest.path, ...(t.rest.aliases ?? [])])).size).toBe(
      faces.flatMap((t) => [t.rest.path, ...(t.rest.aliases ?? [])]).length,
    );
    expect(new Set(faces.map((t) => t.graphql.mutation)).size).toBe(faces.length);
    expect(new Set(faces.map((t) => t.mcp.name)).size).toBe(faces.length);
  });
});
