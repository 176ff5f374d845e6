import cliProgress from 'cli-progress';
import type { Sql } from '../client.ts';
import { copyRows, withIndexesRebuilt } from './copy.ts';
import { criminalRecordTables } from './criminal-records.ts';
import { homeServiceTables } from './home-services.ts';
import { leadTables } from './leads.ts';
import { localBusinessTables } from './local-businesses.ts';
import { realEstateTables } from './real-estate.ts';
import { rentalTables } from './rentals.ts';
import { storeTables } from './stores.ts';
import type { Sizes, TableRows } from './types.ts';

export const SCALES = {
  small: {
    companies: 1_000,
    people: 10_000,
    businessesPerCityCategory: 12,
    reviewsPerBusiness: 2,
    stores: 1_500,
    properties: 1_500,
    agents: 400,
    businessListings: 400,
    commercialProperties: 400,
    rentalHosts: 200,
    rentalListings: 500,
    prosPerCategory: 3,
    criminalRecords: 1_500,
  },
  medium: {
    companies: 10_000,
    people: 100_000,
    businessesPerCityCategory: 40,
    reviewsPerBusiness: 3,
    stores: 15_000,
    properties: 15_000,
    agents: 4_000,
    businessListings: 4_000,
    commercialProperties: 4_000,
    rentalHosts: 2_000,
    rentalListings: 5_000,
    prosPerCategory: 30,
    criminalRecords: 15_000,
  },
  large: {
    companies: 100_000,
    people: 1_000_000,
    businessesPerCityCategory: 250,
    reviewsPerBusiness: 3,
    stores: 150_000,
    properties: 150_000,
    agents: 40_000,
    businessListings: 40_000,
    commercialProperties: 40_000,
    rentalHosts: 20_000,
    rentalListings: 50_000,
    prosPerCategory: 300,
    criminalRecords: 150_000,
  },
  xlarge: {
    companies: 1_000_000,
    people: 10_000_000,
    businessesPerCityCategory: 2_500,
    reviewsPerBusiness: 3,
    stores: 1_500_000,
    properties: 1_500_000,
    agents: 400_000,
    businessListings: 400_000,
    commercialProperties: 400_000,
    rentalHosts: 200_000,
    rentalListings: 500_000,
    prosPerCategory: 3_000,
    criminalRecords: 1_500_000,
  },
} as const satisfies Record<string, Sizes>;
export type Scale = keyof typeof SCALES;

/** Tables seeded together (later ones reference earlier ones); a group is seeded only if all its tables are empty. */
const GROUPS: { tables: string[]; build: (seed: number, sizes: Sizes) => TableRows[] }[] = [
  { tables: ['company', 'person'], build: leadTables },
  { tables: ['local_business', 'local_business_review'], build: localBusinessTables },
  { tables: ['store'], build: storeTables },
  { tables: ['property', 'real_estate_agent', 'business_listing', 'commercial_property'], build: realEstateTables },
  { tables: ['rental_host', 'rental_listing'], build: rentalTables },
  { tables: ['home_service_pro'], build: homeServiceTables },
  { tables: ['criminal_record'], build: criminalRecordTables },
];

/** Every table the seed fills, in seeding order. */
export const CATALOG_TABLES = GROUPS.flatMap((group) => group.tables);

export interface SeedOptions {
  scale?: Scale;
  /** Same seed, same rows, byte for byte. Default 1. */
  seed?: number;
  /** Show progress bars on stderr when it is a terminal. */
  progress?: boolean;
  /** Called after each table is seeded, with its row count and the time its load took (for benchmarks). */
  onTable?: (timing: SeedTiming) => void;
  /**
   * Seed only the groups of tables that hold one of these tables
   * (e.g. `['person']`: companies and people). Default: all.
   */
  tables?: string[];
}

export interface SeedTiming {
  dataset: string;
  table: string;
  rows: number;
  /** Wall-clock milliseconds of the table's transaction (COPY and index rebuild) and sequence update. */
  ms: number;
}

export interface SeedReport {
  scale: Scale;
  seed: number;
  inserted: Record<string, number>;
  /** Datasets left alone because their tables already hold rows. */
  skipped: string[];
}

async function setReady(sql: Sql, dataset: string, table: string, ready: boolean) {
  await sql`
    insert into dataset_state (dataset, ready, row_count, refreshed_at)
    values (${dataset}, ${ready}, (select count(*) from ${sql(table)}), now())
    on conflict (dataset) do update set ready = excluded.ready, row_count = excluded.row_count,
      refreshed_at = excluded.refreshed_at`;
}

async function isEmpty(sql: Sql, table: string) {
  const rows = await sql`select 1 from ${sql(table)} limit 1`;
  return rows.length === 0;
}

/**
 * Fills the catalog deterministically with COPY. Each table loads in one transaction (its
 * secondary indexes and foreign keys dropped and restored inside it), so an interrupted seed leaves
 * it empty, never half-loaded; datasets that already hold rows are left alone.
 */
export async function seedCatalog(sql: Sql, options: SeedOptions = {}): Promise<SeedReport> {
  const scale = options.scale ?? 'small';
  const seed = options.seed ?? 1;
  const report: SeedReport = { scale, seed, inserted: {}, skipped: [] };
  const showBars = options.progress === true && process.stderr.isTTY === true;
  const bars = showBars
    ? new cliProgress.MultiBar(
        { format: '{dataset} [{bar}] {value}/{total} rows', stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  try {
    for (const group of GROUPS) {
      const wanted = options.tables;
      if (wanted && !group.tables.some((table) => wanted.includes(table))) continue;
      const empty = await Promise.all(group.tables.map((t) => isEmpty(sql, t)));
      const tables = group.build(seed, SCALES[scale]);
      if (empty.includes(false)) {
        for (const t of tables) {
          report.inserted[t.dataset] = 0;
          report.skipped.push(t.dataset);
        }
        continue;
      }
      for (const t of tables) {
        const bar = bars?.create(t.count, 0, { dataset: t.dataset.padEnd(22) });
        await setReady(sql, t.dataset, t.table, false);
        const started = performance.now();
        try {
          const inserted = await sql.begin(async (tx) => {
            // Index builds over millions of rows (the trigram GIN ones
            // above all) work in memory, not in many passes on disk.
            await tx`select set_config('maintenance_work_mem', '512MB', true)
              where pg_size_bytes(current_setting('maintenance_work_mem')) < pg_size_bytes('512MB')`;
            return withIndexesRebuilt(tx as unknown as Sql, t.table, () =>
              copyRows(tx as unknown as Sql, t.table, t.columns, t.rows(), (n) => bar?.increment(n)),
            );
          });
          await sql`select setval(pg_get_serial_sequence(${t.table}, 'id'),
            greatest((select max(id) from ${sql(t.table)}), 1))`;
          options.onTable?.({
            dataset: t.dataset,
            table: t.table,
            rows: inserted,
            ms: performance.now() - started,
          });
        } finally {
          await setReady(sql, t.dataset, t.table, true);
        }
      }
    }
  } finally {
    bars?.stop();
  }
  await sql`analyze`;
  return report;
}
