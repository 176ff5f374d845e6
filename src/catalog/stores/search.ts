import type { Sql } from '../../../db/client.ts';
import { postgresTemplate, selectCatalogPage, type PageWindow } from '../sql.ts';
import { storeConditions } from './filters.ts';
import type { StoreFilter } from '../../sources/stores.ts';

/** A store as the database API lists it (snake_case columns, `id` as text). */
export type StoreRow = Record<string, unknown> & { id: string };

/**
 * A page of the stores matching `filter` in id order (one row more when more follow) and their
 * number. Technology and app names must be stored spellings already (resolveStoreNames).
 */
export function findStores(sql: Sql, filter: StoreFilter, window: PageWindow) {
  return selectCatalogPage<StoreRow>(
    sql,
    {
      select: (
        sql,
      ) => sql`select x.id::text as id, x.domain, x.name, x.platform, x.plan_tier, x.country_code, x.city, x.state,
        x.category, x.technologies, x.apps, x.instagram_url, x.facebook_url, x.tiktok_url, x.youtube_url,
        x.linkedin_url, x.twitter_url, x.pinterest_url, x.emails, x.phones,
        x.estimated_monthly_visits, x.estimated_monthly_sales::float8 as estimated_monthly_sales, x.employee_count`,
      table: 'store',
      where: (sql) => storeConditions(postgresTemplate(sql), filter),
    },
    window,
  );
}
