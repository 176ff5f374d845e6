import { and, asc, eq, gt, isNull, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { criminalRecordTable as cr } from '../../../db/tables/criminal-records.ts';
import type { CriminalRecordSource } from '../../sources/criminal-records.ts';

/** A record's middle name agrees with the searched one (see CriminalRecordQuery.name). */
function middleName(searched: string): SQL {
  const recorded = sql`lower(replace(${cr.middleName}, '.', ''))`;
  const agrees =
    searched.length === 1
      ? sql`left(${recorded}, 1) = ${searched}`
      : sql`(${recorded} = ${searched} or ${recorded} = ${searched.slice(0, 1)})`;
  return sql`(${isNull(cr.middleName)} or ${agrees})`;
}

/** Criminal records from the catalog tables. */
export function catalogCriminalRecords(db: Executor): CriminalRecordSource {
  return {
    async searchRecords({ name, state, dateOfBirth, limit, afterId }) {
      // lower(last_name), lower(first_name), state: the criminal_record_name_idx index.
      return db
        .select({
          id: cr.id,
          recordKey: cr.recordKey,
          firstName: cr.firstName,
          middleName: cr.middleName,
          lastName: cr.lastName,
          dateOfBirth: cr.dateOfBirth,
          state: cr.state,
          county: cr.county,
          source: cr.source,
          caseNumber: cr.caseNumber,
          offense: cr.offense,
          offenseDate: cr.offenseDate,
          disposition: cr.disposition,
        })
        .from(cr)
        .where(
          and(
            sql`lower(${cr.lastName}) = ${name.last}`,
            sql`lower(${cr.firstName}) = ${name.first}`,
            state ? eq(cr.state, state) : undefined,
            dateOfBirth ? eq(cr.dateOfBirth, dateOfBirth) : undefined,
            name.middle ? middleName(name.middle) : undefined,
            afterId === undefined ? undefined : gt(cr.id, afterId),
          ),
        )
        .orderBy(asc(cr.id))
        .limit(limit);
    },
  };
}
