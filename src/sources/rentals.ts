/** Rental listings and their hosts (rental host scraper). */
export interface RentalSource {}
