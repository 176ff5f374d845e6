/** Consumer records built from the catalog's owners and contacts (people finder). */
export interface PersonSource {}
