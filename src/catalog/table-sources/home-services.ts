import { and, arrayOverlaps, asc, eq, gt } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { homeServiceProTable as hs } from '../../../db/tables/home-services.ts';
import type { HomeServiceSource } from '../../sources/home-services.ts';

/** Home-service pros from the catalog tables: the (category, id) index, the service-ZIP GIN index. */
export function catalogHomeServices(db: Executor): HomeServiceSource {
  return {
    async searchPros({ category, zipCodes, limit, afterId }) {
      return db
        .select({
          id: hs.id,
          profileUrl: hs.profileUrl,
          name: hs.name,
          category: hs.category,
          grade: hs.grade,
          phone: hs.phone,
          email: hs.email,
          website: hs.website,
          street: hs.street,
          city: hs.city,
          state: hs.state,
          zip: hs.zip,
          hours: hs.hours,
          licensed: hs.licensed,
          insured: hs.insured,
          yearsInBusiness: hs.yearsInBusiness,
          serviceZips: hs.serviceZips,
          rating: hs.rating,
          reviewCount: hs.reviewCount,
        })
        .from(hs)
        .where(
          and(
            eq(hs.category, category),
            zipCodes.length > 0 ? arrayOverlaps(hs.serviceZips, zipCodes) : undefined,
            afterId === undefined ? undefined : gt(hs.id, afterId),
          ),
        )
        .orderBy(asc(hs.id))
        .limit(limit);
    },
  };
}
