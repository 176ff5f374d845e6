import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderToolsDoc } from './docs.ts';

/** Writes docs/tools.md from the tool registry (`npm run docs:tools`). */
const target = fileURLToPath(new URL('../../docs/tools.md', import.meta.url));
await writeFile(target, renderToolsDoc());
console.log(`wrote ${target}`);
