import { and, arrayContains, asc, eq, gt, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { agentTable as a } from '../../../db/tables/agents.ts';
import type { AgentLocation, AgentSource } from '../../sources/agents.ts';

/** Matches the (state, lower(city)) and zip indexes. */
function locationCondition(location: AgentLocation): SQL | undefined {
  return location.kind === 'zip'
    ? eq(a.zip, location.zip)
    : and(eq(a.state, location.state), sql`lower(${a.city}) = lower(${location.city})`);
}

/** Real estate agents from the catalog tables. */
export function catalogAgents(db: Executor): AgentSource {
  return {
    async searchAgents({ location, specialty, language, limit, afterId }) {
      return db
        .select({
          id: a.id,
          profileUrl: a.profileUrl,
          name: a.name,
          brokerage: a.brokerage,
          licenseNumber: a.licenseNumber,
          phone: a.phone,
          email: a.email,
          city: a.city,
          state: a.state,
          zip: a.zip,
          specialties: a.specialties,
          languages: a.languages,
          yearsExperience: a.yearsExperience,
          rating: a.rating,
          reviewCount: a.reviewCount,
          salesLast12Months: a.salesLast12Months,
          priceRangeMin: a.priceRangeMin,
          priceRangeMax: a.priceRangeMax,
        })
        .from(a)
        .where(
          and(
            locationCondition(location),
            specialty === undefined ? undefined : arrayContains(a.specialties, [specialty]),
            language === undefined ? undefined : arrayContains(a.languages, [language]),
            afterId === undefined ? undefined : gt(a.id, afterId),
          ),
        )
        .orderBy(asc(a.id))
        .limit(limit);
    },
  };
}
