/** People and companies of the lead database (lead scraper, mobile finder). */
export interface LeadSource {}
