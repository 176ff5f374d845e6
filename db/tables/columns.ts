import { sql } from 'drizzle-orm';
import { bigint, customType, text } from 'drizzle-orm/pg-core';

/** Catalog primary keys: assigned by the generator (deterministic), by default for imports. */
export const catalogId = () => bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity();

/** A text[] column that is never null (empty when unknown). */
export const textList = (name: string) => text(name).array().notNull().default(sql`'{}'::text[]`);

export const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });
