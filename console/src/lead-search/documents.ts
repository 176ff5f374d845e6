import { graphql } from '../gql/index.ts';
import type { ConsoleLeadSearchQuery, ConsoleRevealLeadsMutation } from '../gql/graphql.ts';

/** The free search the page browses with: people without contact details, and the allowance left. */
export const LeadSearchQuery = graphql(`
  query ConsoleLeadSearch($filter: LeadFilter, $first: Int, $after: String) {
    leadSearch(filter: $filter, first: $first, after: $after) {
      totalCount
      totalCountIsEstimate
      dailyAllowanceRemaining
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        id
        fullName
        title
        seniority
        department
        hasEmail
        emailStatus
        hasPhone
        received
        linkedinUrl
        city
        state
        country
        company {
          name
          domain
          website
          industry
          size
          employeesCount
          annualRevenue
          city
          state
          country
          technologies
          keywords
          founded
        }
      }
    }
  }
`);

/** The metered path: chosen people with their contact details. */
export const RevealLeads = graphql(`
  mutation ConsoleRevealLeads($ids: [ID!]!) {
    revealLeads(ids: $ids) {
      leads {
        id
        fullName
        title
        seniority
        department
        email
        emailStatus
        phone
        mobile
        linkedinUrl
        city
        state
        country
        company {
          name
          domain
          industry
          size
        }
      }
      counted
      dailyAllowanceRemaining
      userErrors {
        code
        field
        message
      }
    }
  }
`);

export type PreviewPerson = NonNullable<ConsoleLeadSearchQuery['leadSearch']>['nodes'][number];
export type RevealedPerson = NonNullable<NonNullable<ConsoleRevealLeadsMutation['revealLeads']['leads']>[number]>;

/** What revealing `people` costs: those not received before; the rest are free. */
export const costOf = (people: readonly Pick<PreviewPerson, 'received'>[]) => people.filter((p) => !p.received).length;
