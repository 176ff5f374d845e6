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

const HUBSPOT_CONTACT_FIELDS = [
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
] as const;
const HUBSPOT_COMPANY_FIELDS = [
  'name',
  'domain',
  'website',
  'phone',
  'address',
  'city',
  'state',
  'zip',
  'country',
  'description',
  'industry',
  'numberofemployees',
  'annualrevenue',
  'lifecyclestage',
] as const;

/**
 * The fields a mapping may name, per kind: a list, `apiName` (any field of the org, by its API name:
 * custom fields too; a field the org does not have is refused per row by Salesforce), `header` (any
 * column header of the sheet), or null (a kind that sends no fields).
 */
export const KIND_FIELDS: Record<DestinationKind, readonly string[] | 'apiName' | 'header' | null> = {
  hubspot_contacts: HUBSPOT_CONTACT_FIELDS,
  hubspot_companies: HUBSPOT_COMPANY_FIELDS,
  salesforce_leads: 'apiName',
  salesforce_contacts: 'apiName',
  google_sheet: 'header',
  slack_summary: null,
};

const SALESFORCE_PERSON = {
  email: 'Email',
  firstName: 'FirstName',
  lastName: 'LastName',
  jobTitle: 'Title',
  phone: 'Phone',
  mobile: 'MobilePhone',
};

/** Each kind's default field for a column meaning (a sheet takes every column, under its CSV header). */
export const KIND_DEFAULTS: Record<DestinationKind, Record<string, string>> = {
  hubspot_contacts: {
    email: 'email',
    firstName: 'firstname',
    lastName: 'lastname',
    jobTitle: 'jobtitle',
    phone: 'phone',
    mobile: 'mobilephone',
    company: 'company',
    website: 'website',
    city: 'city',
    state: 'state',
    zip: 'zip',
    country: 'country',
  },
  hubspot_companies: {
    company: 'name',
    domain: 'domain',
    website: 'website',
    phone: 'phone',
    city: 'city',
    state: 'state',
    zip: 'zip',
    country: 'country',
  },
  salesforce_leads: {
    ...SALESFORCE_PERSON,
    company: 'Company',
    website: 'Website',
    city: 'City',
    state: 'State',
    zip: 'PostalCode',
    country: 'Country',
  },
  salesforce_contacts: { ...SALESFORCE_PERSON, city: 'MailingCity', country: 'MailingCountry' },
  google_sheet: {},
  slack_summary: {},
};
