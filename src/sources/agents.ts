/** Real estate agents (real estate agents scraper). */
export interface AgentSource {}
