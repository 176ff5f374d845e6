/**
 * What a result column means, whatever the tool (an email, a first name, a company's domain…), by its
 * key: the default field mappings of every destination derive from it. And the fields each kind of
 * destination takes, which a mapping may name.
 */
import type { DestinationKind } from '../../db/tables/destinations.ts';

const MEANINGS: Record<string, string> = {
  email: 'email',
  emails: 'email',
  first_name: 'firstName',
  last_name: 'lastName',
  full_name: 'fullName',
  title: 'jobTitle',
  phone: 'phone',
  mobile: 'mobile',
  name: 'company',
  company_name: 'company',
  company_domain: 'domain',
  domain: 'domain',
  website: 'website',
  company_website: 'website',
  city: 'city',
  state: 'state',
  postal_code: 'zip',
  country: 'country',
  country_code: 'country',
  linkedin_url: 'linkedin',
};

/** The meaning of a column key (a pipeline's `tool.key` read by its key), or undefined. */
export const meaningOf = (key: string): string | undefined => MEANINGS[key.slice(key.lastIndexOf('.') + 1)];

/** The fields a mapping may name, per kind (null: a kind that sends no fields). */
export const KIND_FIELDS: Partial<Record<DestinationKind, readonly string[] | null>> = {
  hubspot_contacts: [
    'email',
    'firstname',
    'lastname',
    'jobtitle',
    'phone',
    'mobilephone',
    'company',
    'website',
    'city',
    'state',
    'zip',
    'country',
    'address',
    'industry',
    'lifecyclestage',
    'hs_lead_status',
  ],
  slack_summary: null,
};
