import { z } from 'zod';
import { parseMapLink } from './map-links.ts';

/** The map-listing scraper's input (src/tools/maps.ts): fields, labels, examples and cross-field rules. */

const lat = z.number().min(-90).max(90);
const lng = z.number().min(-180).max(180);
const mapLink = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    try {
      parseMapLink(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `${(err as Error).message}` });
    }
  });

/** A search link without words (only a map view) has nothing to search for by itself. */
const wordless = (link: string) => {
  try {
    const parsed = parseMapLink(link);
    return parsed.kind === 'search' && parsed.keywords === '';
  } catch {
    return false;
  }
};

export const mapsInput = z
  .object({
    searchStringsArray: z
      .array(z.string().trim().min(1, 'search terms must not be empty').max(200))
      .min(1)
      .max(100)
      .optional()
      .describe('Search terms, e.g. ["dentist", "orthodontist"]; with `url`, they replace the words of the link.')
      .meta({ title: 'Search terms', examples: [['dentist']] }),
    locationQuery: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .optional()
      .describe(
        'City, state or address, e.g. "Denver, CO". Use it or customGeolocation, not both; ' +
          'with `url`, it replaces the place or map area of the link.',
      )
      .meta({ title: 'Location', examples: ['Denver, CO'] }),
    customGeolocation: z
      .object({
        lat1: lat.describe('Latitude of one corner.').meta({ title: 'Corner 1 latitude', examples: [39.6] }),
        lng1: lng.describe('Longitude of that corner.').meta({ title: 'Corner 1 longitude', examples: [-105.1] }),
        lat2: lat.describe('Latitude of the opposite corner.').meta({ title: 'Corner 2 latitude', examples: [39.9] }),
        lng2: lng
          .describe('Longitude of the opposite corner.')
          .meta({ title: 'Corner 2 longitude', examples: [-104.8] }),
      })
      .optional()
      .describe(
        'Bounding box with numeric corners lat1, lng1, lat2, lng2; ' +
          'with `url`, it replaces the place or map area of the link.',
      )
      .meta({ title: 'Map area', examples: [{ lat1: 39.6, lng1: -105.1, lat2: 39.9, lng2: -104.8 }] }),
    maxCrawledPlacesPerSearch: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(10_000, 'must be at most 10000')
      .default(100)
      .describe('Places per search term; default 100.')
      .meta({ title: 'Places per search term', examples: [100] }),
    url: mapLink
      .optional()
      .describe(
        'A map-search link used instead of searchStringsArray and locationQuery, e.g. ' +
          '"https://www.google.com/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z". ' +
          'Its words become keywords, a place in them the location, else the map area (@lat,lng,zoom) is searched; ' +
          'a place link finds that one place. The response reports what ran in search_translation.',
      )
      .meta({
        title: 'Map-search link',
        examples: ['https://www.google.com/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z'],
      }),
    startUrls: z
      .array(mapLink)
      .min(1)
      .max(100)
      .optional()
      .describe(
        'Map-search links (each searched like `url`) or place links (each finds that one place, e.g. ' +
          'the `url` column of an earlier run).',
      )
      .meta({
        title: 'Map links',
        examples: [['https://www.google.com/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z']],
      }),
  })
  .superRefine((input, ctx) => {
    if (!input.searchStringsArray && !input.url && !input.startUrls) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'at least one of searchStringsArray, url or startUrls is required',
      });
    }
    if (input.locationQuery && input.customGeolocation) {
      ctx.addIssue({
        code: 'custom',
        path: ['customGeolocation'],
        message: 'use locationQuery or customGeolocation, not both',
      });
    }
    if (input.url && !input.searchStringsArray && wordless(input.url)) {
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: 'the link shows a map area but has no search words; send searchStringsArray with it',
      });
    }
    input.startUrls?.forEach((link, i) => {
      if (wordless(link))
        ctx.addIssue({
          code: 'custom',
          path: ['startUrls', i],
          message: 'the link shows a map area but has no search words; use url with searchStringsArray instead',
        });
    });
  });
export type MapsInput = z.output<typeof mapsInput>;
