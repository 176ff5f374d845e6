import { citiesOf, LISTINGS_PER_PAGE, type RentalHostsInput } from '../rental-hosts.ts';
import { roomIdOf } from '../../sources/rentals.ts';
import { defineUpstream, int, num, obj, text } from './types.ts';

const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region' });

/** The one currency the actor reports prices in: its default is CZK, and most of the tool's countries pay in euros. */
const CURRENCY = 'EUR';

/**
 * A listing link as the actor accepts it: it refuses links whose host is not Airbnb's, and the tool
 * accepts any host whose path ends in /rooms/<id> (the same listing).
 */
const roomLink = (url: string) => `https://www.airbnb.com/rooms/${roomIdOf(url)}`;

const nightsBetween = (checkin: string, checkout: string) =>
  Math.round((Date.parse(checkout) - Date.parse(checkin)) / 86_400_000);

/** "2 bedrooms" → 2; a studio (no number) is null. */
const leadingInt = (label: unknown): number | null => {
  const m = /^\s*(\d+)/.exec(text(label) ?? '');
  return m ? Number(m[1]) : null;
};

const bool = (value: unknown): boolean | null => (typeof value === 'boolean' ? value : null);

/**
 * Rental hosts on Airbnb Scraper (dtrungtin/airbnb-scraper): one `locationQuery` (the first city; the
 * actor searches one location a run) or the listing links as `startUrls`, `maxListings` the bound.
 * `simple: false` with `addMoreHostInfo` makes each item carry its `primaryHost` (profile link and
 * listing count); reviews and the calendar are not read. The actor has no superhost or professional-host
 * filter: both are applied here on the item. Amenity, price and unique-email filters are not applied
 * upstream (docs/upstream.md).
 */
export const rentalHostsUpstream = defineUpstream<RentalHostsInput>({
  tool: 'rental-hosts',
  defaultActor: 'dtrungtin~airbnb-scraper',
  unavailableColumns: {
    host_email: 'not published by the site',
    host_phone: 'not published by the site',
    pro_host: 'not confirmed among the actor’s published output fields: read when an item has it',
    superhost: 'not confirmed among the actor’s published output fields: read when an item has it',
    city: 'not confirmed among the actor’s published output fields: read when an item has it',
    country: 'not confirmed among the actor’s published output fields: read when an item has it',
    country_code: 'not confirmed among the actor’s published output fields: read when an item has it',
    amenities: 'not switched on (includeReviews and the detail fields are off)',
    bedrooms: 'not confirmed among the actor’s published output fields: read when an item has it',
    review_count: 'not confirmed among the actor’s published output fields: read when an item has it',
    checkin: 'from the input: the stay dates, when given',
    checkout: 'from the input: the stay dates, when given',
    stay_price: 'from the input’s stay dates and the nightly price, when the dates are given',
  },
  actorUrl: 'https://apify.com/dtrungtin/airbnb-scraper',
  input(input, maxItems) {
    const links = input.mode === 'single' ? (input.listingUrl ? [input.listingUrl] : []) : (input.bulkListings ?? []);
    const rooms = [...new Set(links.map(roomLink))];
    const search =
      input.mode === 'city'
        ? {
            locationQuery: citiesOf(input)[0]?.text,
            maxListings: Math.min(input.maxPages * LISTINGS_PER_PAGE, maxItems),
          }
        : { startUrls: rooms.map((url) => ({ url })), maxListings: Math.min(rooms.length, maxItems) };
    return {
      ...search,
      simple: false,
      addMoreHostInfo: true,
      includeReviews: false,
      calendarMonths: 0,
      currency: CURRENCY,
      ...(input.checkin && input.checkout ? { checkIn: input.checkin, checkOut: input.checkout } : {}),
    };
  },
  row(item, input) {
    const url = text(item.url);
    if (!url) return null;
    const host = obj(item.primaryHost);
    const superhost = bool(host.isSuperhost) ?? bool(item.isHostedBySuperhost);
    const proHost = bool(item.hasCommercialHostInfo);
    if (input.onlySuperhosts && superhost !== true) return null;
    if (input.onlyProHosts && proHost !== true) return null;
    const rate = obj(obj(item.pricing).rate);
    const price = num(rate.amount);
    const countryCode = text(item.countryCode);
    const nights = input.checkin && input.checkout ? nightsBetween(input.checkin, input.checkout) : null;
    return {
      host_name: text(host.name) ?? text(host.firstName),
      host_email: null,
      host_phone: null,
      host_url: text(host.hostUrl),
      pro_host: proHost,
      superhost,
      host_listings: int(host.listingsCount),
      listing_url: url,
      title: text(item.name),
      city: text(item.localizedCity),
      country: countryCode && /^[A-Z]{2}$/.test(countryCode) ? (REGION_NAMES.of(countryCode) ?? null) : null,
      country_code: countryCode,
      price,
      currency: text(rate.currency),
      checkin: input.checkin ?? null,
      checkout: input.checkout ?? null,
      stay_price: nights !== null && price !== null ? Math.round(price * nights * 100) / 100 : null,
      amenities: null,
      bedrooms: leadingInt(item.bedroomLabel),
      guests: int(item.numberOfGuests),
      rating: num(item.stars),
      review_count: int(obj(item.reviewDetailsInterface).reviewCount),
    };
  },
});
