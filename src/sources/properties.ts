/** Residential properties and their owners (property lookup, owner contact, deal finder, people finder). */
export interface PropertySource {}
