import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './db/tables/index.ts',
  out: './db/migrations',
  casing: 'snake_case',
});
