import { z } from 'zod';
import { AppError } from '../../shared/errors.ts';
import {
  isKnownCountry,
  normaliseCountry,
  normaliseDepartment,
  normaliseSeniority,
  canonicalTechnology,
  INDUSTRY_TAG_IDS,
} from './vocabulary.ts';
import { stateAbbreviation } from '../../shared/geo.ts';
import { LEAD_EMAIL_STATUSES } from '../../shared/email-status.ts';
import type { LeadFilters } from '../../sources/leads.ts';

/**
 * People-search links in the older bracket format, e.g.
 *   https://app.apollo.io/#/people?personTitles[]=ceo&personLocations[]=United%20States
 *     &organizationNumEmployeesRanges[]=11,50 (one line)
 * Any host; the query may sit after the hash route or in the URL's own query string.
 */
export interface TranslationEntry {
  parameter: string;
  value: string;
  filter?: string;
  note?: string;
}

const translationEntry = z
  .object({
    parameter: z.string().describe('The link parameter.'),
    value: z.string().describe('Its value.'),
    filter: z.string().optional().describe('The filter it became.'),
    note: z.string().optional().describe('How it was read.'),
  })
  .strict()
  .describe('One parameter of the link and what it became.');

/** What a people-search link was read as (SearchTranslation), declared for the faces that answer it. */
export const peopleSearchTranslation = z
  .object({
    applied: z.array(translationEntry).describe('Parameters applied as they are.'),
    broadened: z
      .array(translationEntry)
      .describe(
        'Parameters applied more broadly (an industry tag as its industry, several employee ranges as one span).',
      ),
    unsupported: z.array(translationEntry).describe('Parameters the lead database cannot apply.'),
    ignored: z.array(z.string()).describe('Parameters dropped on purpose (paging, sorting, uniqueUrlId).'),
    overridden: z
      .array(
        translationEntry
          .extend({
            overriddenBy: z.array(z.string()).describe('The explicit parameters that replaced what it became.'),
          })
          .strict(),
      )
      .describe(
        'Parameters read from the link but replaced by a parameter sent explicitly (a link’s personTitles[] by title).',
      ),
  })
  .strict()
  .describe('How the url parameter was read: each parameter applied, broadened or unsupported.');

export interface SearchTranslation {
  applied: TranslationEntry[];
  broadened: TranslationEntry[];
  unsupported: TranslationEntry[];
  /** Parameters dropped on purpose (uniqueUrlId, paging, sorting). */
  ignored: string[];
  /**
   * Parameters whose filter an explicit parameter of the same search replaced (filled by the search that merges them).
   */
  overridden: (TranslationEntry & { overriddenBy: string[] })[];
}

const ARRAY_PARAMETERS = new Set([
  'personTitles',
  'personNotTitles',
  'personLocations',
  'personNotLocations',
  'personSeniorities',
  'personDepartmentOrSubdepartments',
  'organizationLocations',
  'organizationNotLocations',
  'organizationNumEmployeesRanges',
  'organizationIndustryTagIds',
  'organizationNotIndustryTagIds',
  'qOrganizationKeywordTags',
  'qNotOrganizationKeywordTags',
  'currentlyUsingAnyOfTechnologyUids',
  'currentlyUsingAllOfTechnologyUids',
  'currentlyNotUsingAnyOfTechnologyUids',
  'contactEmailStatusV2',
  'organizationIds',
  'personIds',
]);
const IGNORED = new Set([
  'uniqueUrlId',
  'page',
  'sortByField',
  'sortAscending',
  'includeSimilarTitles',
  'finderViewId',
  'prospectedByCurrentTeam',
]);

export class UnsupportedUrlFormatError extends AppError {
  constructor(parameters: string[]) {
    super(
      400,
      'unsupported_url_format',
      `This people-search URL uses the newer format: array parameters without brackets (${parameters
        .slice(0, 3)
        .map((p) => `${p}=`)
        .join(', ')}). ` +
        'Open the search in the older format, where array parameters end in [] (e.g. ' +
        'personTitles[]=ceo), and send that URL.',
    );
  }
}

/**
 * 400 `no_usable_filters`: the link has nothing the lead database can apply. `details` names each
 * parameter found and why it is not used; the REST body carries the whole `search_translation`.
 */
export class NoUsableFiltersError extends AppError {
  constructor(translation: SearchTranslation) {
    const details = [
      ...translation.unsupported.map((e) => ({
        path: 'url',
        message: `${e.parameter}=${e.value}: ${e.note ?? 'the lead database cannot apply it'}`,
      })),
      ...translation.ignored.map((parameter) => ({
        path: 'url',
        message: `${parameter}: ignored (paging, sorting or view)`,
      })),
    ];
    super(
      400,
      'no_usable_filters',
      'The url has no filters the lead database can use; details name each parameter found and why it is not used.',
      details.length > 0 ? details : [{ path: 'url', message: 'the link has no search parameters' }],
      { search_translation: translation },
    );
  }
}

/** Reads the link's parameters; array parameters must carry "[]". */
export function readPeopleSearchUrl(link: string): URLSearchParams {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new AppError(400, 'validation_failed', 'url is not a URL', [{ path: 'url', message: 'is not a URL' }]);
  }
  const hashQuery = url.hash.includes('?') ? url.hash.slice(url.hash.indexOf('?') + 1) : '';
  const params = new URLSearchParams(hashQuery || url.search.slice(1));
  const newer = [...new Set([...params.keys()].filter((k) => ARRAY_PARAMETERS.has(k)))];
  if (newer.length > 0) throw new UnsupportedUrlFormatError(newer);
  params.delete('uniqueUrlId');
  return params;
}

function addLocation(
  target: 'person' | 'organization',
  raw: string,
  filters: LeadFilters,
  t: SearchTranslation,
  parameter: string,
) {
  const parts = raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const keys =
    target === 'person'
      ? (['countries', 'states', 'city'] as const)
      : (['companyCountries', 'companyStates', 'companyCity'] as const);
  const push = (key: 'countries' | 'states' | 'companyCountries' | 'companyStates', value: string) => {
    filters[key] ??= [];
    filters[key].push(value);
  };
  const last = parts.at(-1) ?? '';
  const lastState = parts.length === 1 ? stateAbbreviation(last) : undefined;
  if (parts.length === 1 && isKnownCountry(last)) {
    push(keys[0], normaliseCountry(last));
    t.applied.push({ parameter, value: raw, filter: `${keys[0]}=${normaliseCountry(last)}` });
  } else if (lastState) {
    push(keys[1], lastState);
    t.applied.push({ parameter, value: raw, filter: `${keys[1]}=${lastState}` });
  } else if (parts.length >= 2) {
    const [city, region = ''] = parts;
    const country = isKnownCountry(last) ? normaliseCountry(last) : undefined;
    const state = stateAbbreviation(region);
    if (state || !country) {
      filters[keys[2]] = city;
      push(keys[1], state ?? region);
      t.applied.push({ parameter, value: raw, filter: `${keys[2]}=${city}, ${keys[1]}=${state ?? region}` });
    } else {
      filters[keys[2]] = city;
      push(keys[0], country);
      t.applied.push({ parameter, value: raw, filter: `${keys[2]}=${city}, ${keys[0]}=${country}` });
    }
  } else {
    filters[keys[2]] = last;
    t.broadened.push({
      parameter,
      value: raw,
      filter: `${keys[2]}~${last}`,
      note: 'an unrecognised place is matched as part of a city name',
    });
  }
}

/** Turns a bracket-format people-search URL into lead filters, reporting what was applied, broadened or unsupported. */
export function translatePeopleSearchUrl(link: string): { filters: LeadFilters; translation: SearchTranslation } {
  const params = readPeopleSearchUrl(link);
  const filters: LeadFilters = {};
  const t: SearchTranslation = { applied: [], broadened: [], unsupported: [], ignored: [], overridden: [] };
  const ranges: [number, number][] = [];
  const list = (key: keyof LeadFilters): string[] => {
    const lists = filters as Record<keyof LeadFilters, string[] | undefined>;
    lists[key] ??= [];
    return lists[key];
  };

  for (const [rawName, rawValue] of params) {
    const name = rawName.replace(/\[\]$/, '');
    const value = rawValue.trim();
    if (IGNORED.has(name)) {
      if (!t.ignored.includes(name)) t.ignored.push(name);
      continue;
    }
    if (!value) continue;
    switch (rawName) {
      case 'personTitles[]':
        list('titles').push(value);
        t.applied.push({ parameter: rawName, value, filter: 'title' });
        break;
      case 'personNotTitles[]':
        list('notTitles').push(value);
        t.applied.push({ parameter: rawName, value, filter: 'notTitle' });
        break;
      case 'personLocations[]':
        addLocation('person', value, filters, t, rawName);
        break;
      case 'organizationLocations[]':
        addLocation('organization', value, filters, t, rawName);
        break;
      case 'personSeniorities[]': {
        const seniority = normaliseSeniority(value);
        if (seniority) {
          list('seniorities').push(seniority);
          t.applied.push({ parameter: rawName, value, filter: `seniority=${seniority}` });
        } else t.unsupported.push({ parameter: rawName, value, note: 'unknown seniority' });
        break;
      }
      case 'personDepartmentOrSubdepartments[]': {
        const department = normaliseDepartment(value);
        if (!department) t.unsupported.push({ parameter: rawName, value, note: 'unknown department' });
        else {
          if (!list('departments').includes(department.department)) list('departments').push(department.department);
          (department.broadened ? t.broadened : t.applied).push({
            parameter: rawName,
            value,
            filter: `department=${department.department}`,
            ...(department.broadened ? { note: 'a subdepartment is searched as its whole department' } : {}),
          });
        }
        break;
      }
      case 'organizationNumEmployeesRanges[]': {
        const m = /^(\d+)?\s*,\s*(\d+)?$/.exec(value);
        if (!m) t.unsupported.push({ parameter: rawName, value, note: 'expected "min,max"' });
        else ranges.push([m[1] ? Number(m[1]) : 1, m[2] ? Number(m[2]) : Number.MAX_SAFE_INTEGER]);
        break;
      }
      case 'organizationIndustryTagIds[]':
      case 'organizationNotIndustryTagIds[]': {
        const industry = INDUSTRY_TAG_IDS.get(value.toLowerCase());
        const key = rawName.startsWith('organizationNot') ? 'notIndustries' : 'industries';
        if (industry) {
          list(key).push(industry);
          t.broadened.push({
            parameter: rawName,
            value,
            filter: `${key === 'industries' ? 'industry' : 'notIndustry'}=${industry}`,
            note: 'industry tag id mapped to its industry name',
          });
        } else t.unsupported.push({ parameter: rawName, value, note: 'unknown industry tag id' });
        break;
      }
      case 'qOrganizationKeywordTags[]':
        list('keywords').push(value.toLowerCase());
        t.applied.push({ parameter: rawName, value, filter: 'keywords' });
        break;
      case 'qNotOrganizationKeywordTags[]':
        list('notKeywords').push(value.toLowerCase());
        t.applied.push({ parameter: rawName, value, filter: 'notKeywords' });
        break;
      case 'currentlyUsingAnyOfTechnologyUids[]':
      case 'currentlyUsingAllOfTechnologyUids[]':
      case 'currentlyNotUsingAnyOfTechnologyUids[]': {
        const key = rawName.includes('AllOf')
          ? 'technologiesAll'
          : rawName.includes('NotUsing')
            ? 'notTechnologies'
            : 'technologies';
        const technology = canonicalTechnology(value);
        list(key).push(technology);
        t.applied.push({ parameter: rawName, value, filter: `${key}=${technology}` });
        break;
      }
      case 'contactEmailStatusV2[]': {
        const status = value.toLowerCase();
        if ((LEAD_EMAIL_STATUSES as readonly string[]).includes(status)) {
          list('emailStatuses').push(status);
          t.applied.push({ parameter: rawName, value, filter: `emailStatus=${status}` });
        } else if (status === 'likely_to_engage' || status === 'extrapolated' || status === 'unverified') {
          filters.hasEmail = true;
          t.broadened.push({
            parameter: rawName,
            value,
            filter: 'hasEmail=true',
            note: 'searched as any lead with an email',
          });
        } else t.unsupported.push({ parameter: rawName, value, note: 'unknown email status' });
        break;
      }
      case 'revenueRange[min]':
      case 'revenueRange[max]': {
        const amount = Number(value);
        if (!Number.isFinite(amount) || amount < 0)
          t.unsupported.push({ parameter: rawName, value, note: 'not an amount' });
        else {
          filters[rawName.endsWith('[min]') ? 'revenueMin' : 'revenueMax'] = amount;
          t.applied.push({
            parameter: rawName,
            value,
            filter: rawName.endsWith('[min]') ? 'revenueMin' : 'revenueMax',
          });
        }
        break;
      }
      case 'qKeywords':
        list('keywords').push(...value.toLowerCase().split(/\s+/).filter(Boolean));
        t.broadened.push({
          parameter: rawName,
          value,
          filter: 'keywords',
          note: 'free text is searched as company keywords, any of its words',
        });
        break;
      default:
        t.unsupported.push({ parameter: rawName, value, note: 'not a filter the lead database supports' });
    }
  }
  if (ranges.length > 0) {
    const min = Math.min(...ranges.map((r) => r[0]));
    const max = Math.max(...ranges.map((r) => r[1]));
    filters.minEmployees = min;
    if (max !== Number.MAX_SAFE_INTEGER) filters.maxEmployees = max;
    const entry = {
      parameter: 'organizationNumEmployeesRanges[]',
      value: ranges.map((r) => `${r[0]},${r[1] === Number.MAX_SAFE_INTEGER ? '' : r[1]}`).join(' | '),
      filter: `minEmployees=${min}${max === Number.MAX_SAFE_INTEGER ? '' : `, maxEmployees=${max}`}`,
    };
    (ranges.length > 1 ? t.broadened : t.applied).push(
      ranges.length > 1
        ? { ...entry, note: 'several ranges are searched as one from the lowest to the highest' }
        : entry,
    );
  }
  return { filters, translation: t };
}
