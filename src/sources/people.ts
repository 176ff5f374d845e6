/** A person's name as searched: lower case, without punctuation; `middle` only when one was given. */
export interface PersonName {
  first: string;
  middle?: string;
  last: string;
}

/** One person as the people finder returns them. */
export interface PersonRecord {
  /** Stable across searches: "owner-<n>" for property owners, "lead-<n>" for lead database people. */
  personId: string;
  /** property_records or lead_database. */
  source: string;
  fullName: string;
  firstName: string;
  middleName: string | null;
  lastName: string;
  /** Where the person is reached: the owner's mailing address, or "City, ST" from the lead database. */
  address: string | null;
  street: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
  /** Every known address, the current one first. */
  addresses: string[];
  /** Addresses of the properties the person owns. */
  ownedProperties: string[];
  phones: string[];
  emails: string[];
  /** Names of likely relatives. */
  relatives: string[];
  employer: string | null;
  jobTitle: string | null;
}

/** What to look for; every criterion given must hold. */
export interface PersonQuery {
  name?: PersonName;
  /** A normalised street line ("123 main st"); matched in its common spellings. */
  street?: string;
  city?: string;
  /** Two-letter code. */
  state?: string;
  /** Five digits. */
  zip?: string;
  /** The last ten digits of a US number. */
  phone?: string;
  /** Lower case. */
  email?: string;
}

export interface PersonPageQuery extends PersonQuery {
  limit: number;
  /** Cursor from the previous page's `next`; absent for the first page. */
  after?: string;
}

export interface PersonPage {
  people: PersonRecord[];
  /** Cursor of the next page; null when there are no more people. */
  next: string | null;
}

/** Consumer records built from the catalog's owners and contacts (people finder). */
export interface PersonSource {
  /** Persons matching the query, in a stable order, at most `limit` per page. */
  searchPeople(query: PersonPageQuery): Promise<PersonPage>;
}
