/** Business-for-sale listings (business-for-sale scraper). */
export interface BusinessListingSource {}
