import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATASETS } from '../../../db/import/datasets.ts';
import { renderDatasetsDoc } from '../../../db/import/docs.ts';
import { ROOT } from '../../helpers/process.ts';

describe('docs/datasets.md', () => {
  it('is the text generated from the import descriptors (npm run docs:datasets)', () => {
    expect(readFileSync(path.join(ROOT, 'docs/datasets.md'), 'utf8')).toBe(renderDatasetsDoc());
  });

  it('documents every import column of every dataset', () => {
    const doc = renderDatasetsDoc();
    for (const dataset of DATASETS) {
      expect(doc).toContain(`### ${dataset.name}\n`);
      for (const column of dataset.columns) expect(doc).toContain(`| \`${column.name}\` |`);
    }
  });
});
