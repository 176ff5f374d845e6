import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEPARTMENTS, SENIORITIES } from '../../db/tables/leads.ts';
import { INDUSTRY_TAG_IDS, KNOWN_COUNTRIES } from '../../src/catalog/leads/vocabulary.ts';
import { LEAD_EMAIL_STATUSES } from '../../src/shared/email-status.ts';
import { US_STATES } from '../../src/shared/geo.ts';
import { getTool } from '../../src/tools/index.ts';
import { UPSTREAM_DECLARATIONS, upstreamDeclaration } from '../../src/tools/upstream/index.ts';
import type { UpstreamDeclaration } from '../../src/tools/upstream/types.ts';

/**
 * What the declarations send is what the actors accept: each actor's published input schema
 * (test/fixtures/apify/input-schemas, sources in SOURCES.md) checks the input a declaration builds, for
 * the tool's example and, for the lead scraper, for any search its people-search URLs can express
 * (a property test): every value in the actor's own vocabulary, or the start refused naming it.
 */

/**
 * The published input schema of an actor as a validator (Apify's schema is JSON Schema plus editor
 * hints). The platform fills a missing field with its schema default before it validates: so does this
 * (on a copy the caller passes).
 */
function schemaOf(actor: string): ValidateFunction | undefined {
  const path = new URL(`../fixtures/apify/input-schemas/${actor}.json`, import.meta.url);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return new Ajv({ strict: false, allErrors: true, useDefaults: true }).compile(JSON.parse(text));
}

const MAX_ITEMS = 250;
const input = (declaration: UpstreamDeclaration, raw: unknown) =>
  declaration.input(getTool(declaration.tool).input.parse(raw), MAX_ITEMS);
const errorsOf = (validate: ValidateFunction) =>
  (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);

describe('the actors accept what the declarations send', () => {
  const withSchemas = UPSTREAM_DECLARATIONS.map((d) => [d, schemaOf(d.defaultActor)] as const);

  it('has the published schema of the actors of maps, the lead scraper, business for sale and rental hosts', () => {
    expect(withSchemas.filter(([, schema]) => schema).map(([d]) => d.tool)).toEqual(
      expect.arrayContaining(['maps', 'lead-scraper', 'business-for-sale', 'rental-hosts']),
    );
  });

  for (const [declaration, validate] of withSchemas) {
    if (!validate) continue;
    it(`${declaration.tool}: the input for the tool's example fits ${declaration.defaultActor}'s schema`, () => {
      const example = getTool(declaration.tool).example;
      const sent = input(declaration, example);
      expect(validate(structuredClone(sent)), errorsOf(validate).join('\n')).toBe(true);
    });
  }

  it('lead scraper: any search of its people-search URLs is sent in the actor’s words, or refused naming what is not', () => {
    const declaration = upstreamDeclaration('lead-scraper')!;
    const validate = schemaOf(declaration.defaultActor)!;
    const tagIds = [...INDUSTRY_TAG_IDS.keys()];
    const some = <T>(values: readonly T[]) => fc.uniqueArray(fc.constantFrom(...values), { maxLength: 3 });
    const search = fc.record({
      seniorities: some(SENIORITIES),
      departments: some(DEPARTMENTS),
      emails: some(LEAD_EMAIL_STATUSES),
      industries: some(tagIds),
      countries: some(KNOWN_COUNTRIES),
      states: some(Object.keys(US_STATES)),
      city: fc.option(fc.constantFrom('Denver, CO', 'Austin, Texas', 'Portland, OR'), { nil: undefined }),
      employees: fc.option(
        fc.constantFrom('1,10', '11,50', '51,200', '201,1000', '1001,5000', '5001,10000', '10001,'),
        {
          nil: undefined,
        },
      ),
      revenue: fc.option(fc.tuple(fc.integer({ min: 0, max: 2e10 }), fc.integer({ min: 0, max: 2e10 })), {
        nil: undefined,
      }),
    });
    let sentCount = 0;
    let refusedCount = 0;
    fc.assert(
      fc.property(search, (s) => {
        const params = new URLSearchParams();
        params.append('personTitles[]', 'ceo');
        for (const v of s.seniorities) params.append('personSeniorities[]', v);
        for (const v of s.departments) params.append('personDepartmentOrSubdepartments[]', v);
        for (const v of s.emails) params.append('contactEmailStatusV2[]', v);
        for (const v of s.industries) params.append('organizationIndustryTagIds[]', v);
        for (const v of s.countries) params.append('personLocations[]', v);
        for (const v of s.states) params.append('personLocations[]', v);
        if (s.city) params.append('personLocations[]', s.city);
        if (s.employees) params.append('organizationNumEmployeesRanges[]', s.employees);
        if (s.revenue) {
          params.append('revenueRange[min]', String(Math.min(...s.revenue)));
          params.append('revenueRange[max]', String(Math.max(...s.revenue)));
        }
        const url = `https://app.apollo.io/#/people?${params.toString().replace(/%5B%5D/g, '[]')}`;
        const parsed = getTool('lead-scraper').input.parse({ url, count: 500 });
        const unsupported = declaration.unsupported!(parsed);
        const expectRefused =
          s.departments.includes('medical') ||
          s.emails.includes('unavailable') ||
          s.industries.some((id) => INDUSTRY_TAG_IDS.get(id) === 'Manufacturing') ||
          s.employees === '5001,10000';
        expect(unsupported.length > 0, unsupported.join('; ')).toBe(expectRefused);
        if (expectRefused) {
          refusedCount++;
          return;
        }
        const sent = declaration.input(parsed, MAX_ITEMS);
        expect(validate(structuredClone(sent)), `${url}\n${errorsOf(validate).join('\n')}`).toBe(true);
        // A city or a location, never both (the actor's documentation).
        expect('contact_city' in sent && 'contact_location' in sent).toBe(false);
        sentCount++;
      }),
      { numRuns: 300, seed: 20261202 },
    );
    expect(sentCount).toBeGreaterThan(50);
    expect(refusedCount).toBeGreaterThan(20);
  });
});

describe('the columns the actors fill', () => {
  /** The published output items of an actor (test/fixtures/apify/items), or none. */
  const itemsOf = (actor: string): Record<string, unknown>[] | undefined => {
    try {
      return JSON.parse(readFileSync(new URL(`../fixtures/apify/items/${actor}.json`, import.meta.url), 'utf8'));
    } catch {
      return undefined;
    }
  };
  const empty = (value: unknown) =>
    value === null || value === undefined || (Array.isArray(value) && value.length === 0);

  for (const declaration of UPSTREAM_DECLARATIONS) {
    const items = itemsOf(declaration.defaultActor);
    if (!items) continue;
    it(`${declaration.tool}: every column is filled from ${declaration.defaultActor}'s items, or declared not available`, () => {
      const tool = getTool(declaration.tool);
      const parsed = tool.input.parse(tool.example);
      const rows = items.map((item) => declaration.row(item, parsed)).filter((row) => row !== null);
      expect(rows.length).toBeGreaterThan(0);
      const unavailable = Object.keys(declaration.unavailableColumns ?? {});
      const unfilled = tool.columns.map((column) => column.key).filter((key) => rows.every((row) => empty(row[key])));
      expect(unfilled.sort()).toEqual(unavailable.sort());
    });
  }
});

describe('limits the actors have no input for', () => {
  it('local reviews: the first searchLimit places of each search keep their reviews, later places are skipped', () => {
    const declaration = upstreamDeclaration('local-reviews')!;
    const tool = getTool('local-reviews');
    const input = tool.input.parse({ searchTerms: ['dentist', 'dentist'], locations: ['Denver, CO'], searchLimit: 2 });
    // One search (the term given twice), so one search link.
    expect(declaration.input(input, MAX_ITEMS).startUrls).toEqual([
      { url: 'https://www.google.com/maps/search/dentist+in+Denver%2C+CO' },
    ]);
    const keep = declaration.limit!(input);
    const review = (place: string, search: string | null = null) => ({ place_id: place, search_term: search });
    expect(['A', 'A', 'B', 'C', 'A', 'B', 'C'].map((place) => keep(review(place)))).toEqual([
      true,
      true,
      true,
      false,
      true,
      true,
      false,
    ]);
    // Items that name their search are counted per search.
    const two = tool.input.parse({
      searchTerms: ['dentist', 'orthodontist'],
      locations: ['Denver, CO'],
      searchLimit: 1,
    });
    const perSearch = declaration.limit!(two);
    expect(
      [review('A', 'dentist'), review('B', 'dentist'), review('C', 'orthodontist'), review('A', 'dentist')].map(
        perSearch,
      ),
    ).toEqual([true, false, true, true]);
    // Business URLs are reviewed each, whatever the limit.
    const direct = declaration.limit!(
      tool.input.parse({ directUrls: ['https://www.google.com/maps/place/?q=place_id:ChIJreview1'] }),
    );
    expect(direct(review('X'))).toBe(true);
  });
});
