/** Commercial properties and their brokers (commercial property scraper). */
export interface CommercialPropertySource {}
