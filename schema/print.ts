import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { printSchema } from 'graphql';
import { schema } from './index.ts';

/** Writes schema/schema.graphql; a test fails when the committed file is stale. */
writeFileSync(fileURLToPath(new URL('./schema.graphql', import.meta.url)), `${printSchema(schema)}\n`);
