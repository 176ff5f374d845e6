import { describe, expect, it } from 'vitest';
import { parsePlace, stateAbbreviation } from '../src/services/geo.ts';
import { parseMapLink } from '../src/services/map-links.ts';
import { mapsInput, overviewMapsRequest, planSearches } from '../src/tools/maps.ts';

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
    expect(parseMapLink('https://www.google.com/maps/place/Blue+Bottle+Coffee/@39.75,-104.99,17z')).toMatchObject({ kind: 'place', name: 'Blue Bottle Coffee' });
    expect(parseMapLink('https://www.google.com/maps?q=plumbers+near+Austin,+TX')).toMatchObject({ kind: 'search', keywords: 'plumbers', place: 'Austin, TX' });
  });

  it('explains what is wrong with other links', () => {
    expect(() => parseMapLink('https://example.com/about')).toThrow(/not a map search or place link/);
    expect(() => parseMapLink('nonsense')).toThrow(/not a URL/);
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
      { term: 'dentist', area: { kind: 'place', text: 'Austin, TX', city: 'Austin', state: 'TX' }, limit: 100 },
      { term: 'plumber', area: { kind: 'place', text: 'Austin, TX', city: 'Austin', state: 'TX' }, limit: 100 },
    ]);
    expect(translation).toBeUndefined();
  });

  it('reads a url and reports how in search_translation', () => {
    const { searches, translation } = plan({ url: 'https://www.google.com/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z' });
    expect(searches).toHaveLength(1);
    expect(searches[0]).toMatchObject({ term: 'dentists', area: { kind: 'place', city: 'Denver', state: 'CO' } });
    expect(translation).toMatchObject({ keywords: ['dentists'], keywordsFrom: 'link', location: 'Denver, CO', locationFrom: 'link', boundingBox: null });
  });

  it('searches the map area of a url without a place', () => {
    const { searches, translation } = plan({ url: 'https://www.google.com/maps/search/dentists/@39.74,-104.99,12z' });
    expect(searches[0]!.area.kind).toBe('box');
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
    expect(searches).toEqual([{ term: 'orthodontist', area: { kind: 'box', box: { lat1: 30, lng1: -98, lat2: 30.5, lng2: -97.5 } }, limit: 100 }]);
    expect(translation).toMatchObject({ keywordsFrom: 'searchStringsArray', locationFrom: 'customGeolocation' });
  });

  it('turns start URLs into searches; a place link finds one place', () => {
    const { searches } = plan({
      startUrls: ['https://www.google.com/maps/place/Summit+Dental/@39.75,-104.99,17z', 'https://www.google.com/maps/search/bakery+in+Boston,+MA'],
    });
    expect(searches.map((s) => [s.term, s.limit])).toEqual([
      ['Summit Dental', 1],
      ['bakery', 100],
    ]);
  });

  it('reads the overview request {query, limit}', () => {
    expect(overviewMapsRequest.parse({ query: 'dentists in Denver, CO', limit: 5 })).toMatchObject({
      searchStringsArray: ['dentists'],
      locationQuery: 'Denver, CO',
      maxCrawledPlacesPerSearch: 5,
    });
  });
});
