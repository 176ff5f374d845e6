/** Home-service pros (home services scraper). */
export interface HomeServiceSource {}
