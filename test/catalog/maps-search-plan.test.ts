import { describe, expect, it } from 'vitest';
import { parsePlace, stateAbbreviation } from '../../src/shared/geo.ts';
import { parseMapLink, placeLink } from '../../src/tools/lib/map-links.ts';
import { mapsInput, overviewMapsRequest, planSearches } from '../../src/tools/maps.ts';

describe('parseMapLink', () => {
  it('reads a search link with a place and a map area', () => {
    expect(parseMapLink('https://www.google.com/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z')).toEqual({
      kind: 'search',
      keywords: 'dentists',
      place: 'Denver, CO',
      center: { lat: 39.74, lng: -104.99, zoom: 12 },
    });
  });

  it('reads a search link without a place, a place link and a ?q= link, on any host', () => {
    expect(parseMapLink('https://maps.example.org/maps/search/coffee%20shop/@47.6,-122.3,14z/data=!3m1')).toEqual({
      kind: 'search',
      keywords: 'coffee shop',
      center: { lat: 47.6, lng: -122.3, zoom: 14 },
    });
    expect(parseMapLink('https://www.google.com/maps/place/Blue+Bottle+Coffee/@39.75,-104.99,17z')).toMatchObject({
      kind: 'place',
      name: 'Blue Bottle Coffee',
    });
    expect(parseMapLink('https://www.google.com/maps?q=plumbers+near+Austin,+TX')).toMatchObject({
      kind: 'search',
      keywords: 'plumbers',
      place: 'Austin, TX',
    });
  });

  it('explains what is wrong with other links', () => {
    expect(() => parseMapLink('https://example.com/about')).toThrow(/not a map search or place link/);
    expect(() => parseMapLink('nonsense')).toThrow(/not a URL/);
    expect(() => parseMapLink('https://www.google.com/maps/place/?q=place_id:bad id')).toThrow(/malformed place id/);
  });

  it('reads place ids and the exact point of a place link', () => {
    expect(parseMapLink('https://www.google.com/maps/place/?q=place_id:ChIJN1t_tDeuEmsRUsoyG83frY4')).toEqual({
      kind: 'place',
      placeId: 'ChIJN1t_tDeuEmsRUsoyG83frY4',
    });
    expect(
      parseMapLink(
        'https://www.google.com/maps/search/?api=1&query=Summit+Dental&query_place_id=ChIJabcdefghijklmnopqrstu',
      ),
    ).toEqual({
      kind: 'place',
      name: 'Summit Dental',
      placeId: 'ChIJabcdefghijklmnopqrstu',
    });
    expect(
      parseMapLink(
        'https://www.google.com/maps/place/Summit+Dental/@39.75,-104.99,15z/data=!3m1!4b1!4m6!3m5!1s0x0:0x0!8m2!3d39.7531!4d-104.9942!19sChIJzyxwvutsrqponmlkjihgf',
      ),
    ).toEqual({
      kind: 'place',
      name: 'Summit Dental',
      placeId: 'ChIJzyxwvutsrqponmlkjihgf',
      center: { lat: 39.75, lng: -104.99, zoom: 15 },
      point: { lat: 39.7531, lng: -104.9942 },
    });
    expect(parseMapLink(placeLink('ChIJ0123456789abcdefghijk'))).toEqual({
      kind: 'place',
      placeId: 'ChIJ0123456789abcdefghijk',
    });
  });
});

describe('parsePlace', () => {
  it.each([
    ['Denver, CO', { city: 'Denver', state: 'CO' }],
    ['Denver, Colorado, USA', { city: 'Denver', state: 'CO' }],
    ['Colorado', { state: 'CO' }],
    ['80202', { postalCode: '80202' }],
    ['Denver, CO 80202', { city: 'Denver', state: 'CO', postalCode: '80202' }],
    ['Springfield', { city: 'Springfield' }],
  ])('%s', (text, expected) => expect(parsePlace(text)).toEqual({ kind: 'place', text, ...expected }));

  it('knows state names and abbreviations', () => {
    expect(stateAbbreviation('new york')).toBe('NY');
    expect(stateAbbreviation('tx')).toBe('TX');
    expect(stateAbbreviation('Narnia')).toBeUndefined();
  });
});

describe('planSearches', () => {
  const plan = (raw: unknown) => planSearches(mapsInput.parse(raw));

  it('runs each term in the location, with the default of 100 places', () => {
    const { searches, translation } = plan({ searchStringsArray: ['dentist', 'plumber'], locationQuery: 'Austin, TX' });
    expect(searches).toEqual([
      {
        kind: 'search',
        term: 'dentist',
        area: { kind: 'place', text: 'Austin, TX', city: 'Austin', state: 'TX' },
        limit: 100,
      },
      {
        kind: 'search',
        term: 'plumber',
        area: { kind: 'place', text: 'Austin, TX', city: 'Austin', state: 'TX' },
        limit: 100,
      },
    ]);
    expect(translation).toBeUndefined();
  });

  it('reads a url and reports how in search_translation', () => {
    const { searches, translation } = plan({
      url: 'https://www.google.com/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z',
    });
    expect(searches).toHaveLength(1);
    expect(searches[0]).toMatchObject({
      kind: 'search',
      term: 'dentists',
      area: { kind: 'place', city: 'Denver', state: 'CO' },
    });
    expect(translation).toEqual({
      url: 'https://www.google.com/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z',
      kind: 'search',
      keywords: ['dentists'],
      keywordsFrom: 'link',
      location: 'Denver, CO',
      locationFrom: 'link',
      boundingBox: null,
      placeId: null,
    });
  });

  it('searches the map area of a url without a place', () => {
    const { searches, translation } = plan({ url: 'https://www.google.com/maps/search/dentists/@39.74,-104.99,12z' });
    expect(searches[0]).toMatchObject({ kind: 'search', area: { kind: 'box' } });
    expect(translation).toMatchObject({ locationFrom: 'map area', location: null });
    const box = translation!.boundingBox!;
    expect(box.lat1).toBeLessThan(39.74);
    expect(box.lat2).toBeGreaterThan(39.74);
  });

  it('lets explicit fields replace the matching part of the url', () => {
    const { searches, translation } = plan({
      url: 'https://www.google.com/maps/search/dentists+in+Denver,+CO',
      searchStringsArray: ['orthodontist'],
      customGeolocation: { lat1: 30, lng1: -98, lat2: 30.5, lng2: -97.5 },
    });
    expect(searches).toEqual([
      {
        kind: 'search',
        term: 'orthodontist',
        area: { kind: 'box', box: { lat1: 30, lng1: -98, lat2: 30.5, lng2: -97.5 } },
        limit: 100,
      },
    ]);
    expect(translation).toMatchObject({ keywordsFrom: 'searchStringsArray', locationFrom: 'customGeolocation' });
  });

  it('turns start URLs into searches; a place link finds one place', () => {
    const { searches } = plan({
      startUrls: [
        'https://www.google.com/maps/place/Summit+Dental/@39.75,-104.99,17z',
        'https://www.google.com/maps/search/bakery+in+Boston,+MA',
      ],
    });
    expect(searches.map((s) => [s.kind, s.term, s.limit])).toEqual([
      ['place', 'Summit Dental', 1],
      ['search', 'bakery', 100],
    ]);
    // Found by name in the link's view, nearest to its centre.
    expect(searches[0]).toMatchObject({
      lookup: { name: 'Summit Dental', area: { kind: 'box' }, near: { lat: 39.75, lng: -104.99 } },
    });
  });

  it('finds a place link with a place id by that id, wherever it is', () => {
    const url = placeLink('ChIJ0123456789abcdefghijk');
    const { searches, translation } = plan({ url, locationQuery: 'Austin, TX' });
    expect(searches).toEqual([
      { kind: 'place', term: 'ChIJ0123456789abcdefghijk', lookup: { placeId: 'ChIJ0123456789abcdefghijk' }, limit: 1 },
    ]);
    expect(translation).toEqual({
      url,
      kind: 'place',
      keywords: [],
      keywordsFrom: 'link',
      location: null,
      boundingBox: null,
      locationFrom: 'place id',
      placeId: 'ChIJ0123456789abcdefghijk',
    });
  });

  it('a place link with a replaced location is found by name there, without a nearest point', () => {
    const { searches } = plan({
      url: 'https://www.google.com/maps/place/Summit+Dental/@39.75,-104.99,17z',
      locationQuery: 'Boston, MA',
    });
    expect(searches).toEqual([
      {
        kind: 'place',
        term: 'Summit Dental',
        lookup: { name: 'Summit Dental', area: { kind: 'place', text: 'Boston, MA', city: 'Boston', state: 'MA' } },
        limit: 1,
      },
    ]);
  });

  it('refuses links that show only a map area, unless search terms come with them', () => {
    const url = 'https://www.google.com/maps/search/@39.74,-104.99,12z';
    const refused = mapsInput.safeParse({ url });
    expect(refused.success).toBe(false);
    expect(refused.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['url', expect.stringMatching(/no search words; send searchStringsArray/)],
    ]);
    expect(plan({ url, searchStringsArray: ['bakery'] }).searches).toEqual([
      { kind: 'search', term: 'bakery', area: { kind: 'box', box: expect.any(Object) }, limit: 100 },
    ]);
    const start = mapsInput.safeParse({ startUrls: ['https://www.google.com/maps/search/bakery', url] });
    expect(start.error!.issues.map((i) => i.path.join('.'))).toEqual(['startUrls.1']);
  });

  it('reads the overview request {query, limit}', () => {
    expect(overviewMapsRequest.parse({ query: 'dentists in Denver, CO', limit: 5 })).toMatchObject({
      searchStringsArray: ['dentists'],
      locationQuery: 'Denver, CO',
      maxCrawledPlacesPerSearch: 5,
    });
  });
});
