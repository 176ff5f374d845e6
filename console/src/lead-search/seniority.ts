import { useQuery } from 'urql';
import { graphql } from '../gql/index.ts';

/**
 * The seniorities in words, as the gateway declares them (the lead scraper's `seniority` column, whose
 * values the lead database holds): one list for the facets, the drawer and the run page's cells.
 */
const SeniorityWordsQuery = graphql(`
  query ConsoleSeniorityWords {
    tool(name: LEAD_SCRAPER) {
      name
      columns {
        key
        values {
          value
          label
        }
      }
    }
  }
`);

export function useSeniorityWords(): Readonly<Record<string, string>> {
  const [{ data }] = useQuery({ query: SeniorityWordsQuery, requestPolicy: 'cache-first' });
  const column = data?.tool?.columns.find((c) => c.key === 'seniority');
  return Object.fromEntries((column?.values ?? []).map((v) => [v.value, v.label]));
}
