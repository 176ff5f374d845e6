import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderDatasetsDoc } from './docs.ts';

/** Writes docs/datasets.md from the import descriptors (`npm run docs:datasets`). */
const target = fileURLToPath(new URL('../../docs/datasets.md', import.meta.url));
await writeFile(target, renderDatasetsDoc());
console.log(`wrote ${target}`);
