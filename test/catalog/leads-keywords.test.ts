import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * Whole-word keyword matching on awkward keywords: plain words are matched through
 * `company.keyword_words` (an indexed array overlap), everything else through the regex after its
 * words; both must agree with what "whole word, case-insensitive, any of" means.
 */
let t: TestApp;
let key: string;
const ids: Record<string, number> = {};

const COMPANIES: Record<string, string[]> = {
  saas: ['B2B SaaS platform', 'Analytics'],
  hyphen: ['e-commerce', 'Retail'],
  underscore: ['supply_chain'],
  phrase: ['Supply Chain Management'],
  accents: ['Café Culture'],
  digits: ['web3', 'DeFi'],
  plus: ['C++ tooling'],
};

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account({ plan: 'growth' }));
  for (const [name, keywords] of Object.entries(COMPANIES)) {
    const [company] = await t.app.core.sql<{ id: number }[]>`
      insert into company (domain, name, keywords) values (${`${name}.kwtest.example`}, ${name}, ${keywords}) returning id::int`;
    const [person] = await t.app.core.sql<{ id: number }[]>`
      insert into person (company_id, first_name, last_name, email) values (${company!.id}, 'Key', 'Word', ${`kw@${name}.kwtest.example`}) returning id::int`;
    ids[name] = person!.id;
  }
});
afterAll(() => t?.stop());

/** Ids of the test companies' people a search returns (the domain filter keeps the seeded catalog out). */
async function matches(params: Record<string, string>): Promise<string[]> {
  const query = new URLSearchParams({ ...params, companyDomain: 'kwtest.example', limit: '100' });
  const res = await t.request('GET', `/api/v1/database/leads?${query}`, { key });
  expect(res.status, res.text).toBe(200);
  const byId = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
  const names = (res.body.leads as { id: number }[]).map((l) => byId.get(l.id)!);
  expect(res.body.pagination.total).toBe(names.length);
  return names.sort();
}

describe('keywords: whole words, any of, case-insensitive', () => {
  it.each([
    ['SAAS', ['saas']],
    ['commerce', ['hyphen']],
    ['chain', ['phrase']],
    ['supply chain', ['phrase']],
    ['e-commerce', ['hyphen']],
    ['café', ['accents']],
    ['CAFÉ culture', ['accents']],
    ['web', []],
    ['web3', ['digits']],
    ['c++', ['plus']],
    ['tool', []],
    ['saas,defi', ['digits', 'saas']],
    ['retail,supply chain', ['hyphen', 'phrase']],
  ])('keywords=%s', async (keywords, expected) => {
    expect(await matches({ keywords })).toEqual(expected);
  });

  it.each([
    ['saas', ['accents', 'digits', 'hyphen', 'phrase', 'plus', 'underscore']],
    ['supply chain,web3', ['accents', 'hyphen', 'plus', 'saas', 'underscore']],
    ['chain', ['accents', 'digits', 'hyphen', 'plus', 'saas', 'underscore']],
  ])('notKeywords=%s', async (notKeywords, expected) => {
    expect(await matches({ notKeywords })).toEqual(expected);
  });

  it('keeps keyword_words equal to the keywords split at word boundaries, after an update too', async () => {
    const [row] = await t.app.core.sql<
      { words: string[] }[]
    >`select keyword_words as words from company where domain = 'hyphen.kwtest.example'`;
    expect(row!.words).toEqual(['e', 'commerce', 'retail']);
    await t.app.core.sql`update company set keywords = array['Fintech'] where domain = 'hyphen.kwtest.example'`;
    expect(await matches({ keywords: 'fintech' })).toEqual(['hyphen']);
    expect(await matches({ keywords: 'commerce' })).toEqual([]);
    await t.app.core
      .sql`update company set keywords = array['e-commerce', 'Retail'] where domain = 'hyphen.kwtest.example'`;
  });
});
