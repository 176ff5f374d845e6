import {
  C_SUITE,
  COMPANY_PREFIXES,
  DEPARTMENT_ROLES,
  FIRST_NAMES,
  INDUSTRIES,
  LAST_NAMES,
  SENIORITY_WEIGHTS,
  SIZE_BANDS,
  TECHNOLOGIES,
  US_CITIES,
  WORLD_CITIES,
  type City,
} from './reference.ts';
import type { LeadEmailStatus } from '../tables/leads.ts';
import { phoneIn } from './phones.ts';
import { Random, sample, slugify, UniqueNames, weighted } from './random.ts';
import type { Sizes, TableRows } from './types.ts';

const NAME_SUFFIXES = [
  '',
  '',
  '',
  'Group',
  'Partners',
  'Global',
  'Co',
  'Collective',
  'Digital',
  'Holdings',
  'Ventures',
  'Networks',
];
const TLDS: [string, number][] = [
  ['com', 70],
  ['io', 10],
  ['co', 8],
  ['net', 6],
  ['ai', 6],
];
type EmailPattern = (first: string, last: string) => string;
const EMAIL_PATTERNS: [EmailPattern, number][] = [
  [(f, l) => `${f}.${l}`, 55],
  [(f, l) => `${f[0]}${l}`, 25],
  [(f) => f, 10],
  [(f, l) => `${f}${l[0]}`, 10],
];

interface GeneratedCompany {
  id: number;
  domain: string;
  city: City;
  employees: number;
  phone: string;
  emailPattern: EmailPattern;
  /** Lower case, as `person.company_industry` holds it. */
  industry: string;
}

const asciiCache = new Map<string, string>();
/** Names come from finite lists, so their ASCII forms are computed once. */
const ascii = (name: string) => {
  const cached = asciiCache.get(name);
  if (cached !== undefined) return cached;
  const value = slugify(name);
  asciiCache.set(name, value);
  return value;
};

/** Title, seniority and department always agree: "VP of Sales" is vp in sales. */
export function titleFor(rng: Random, seniority: string): { title: string; department: string } {
  const [dept, { label, role }] = rng.pick(Object.entries(DEPARTMENT_ROLES));
  switch (seniority) {
    case 'owner':
      return { title: 'Owner', department: 'executive' };
    case 'founder':
      return { title: rng.chance(0.5) ? 'Founder' : 'Co-Founder', department: 'executive' };
    case 'c_suite': {
      const [title, department] = rng.pick(C_SUITE);
      return { title, department };
    }
    case 'partner':
      return { title: 'Partner', department: rng.pick(['executive', 'legal', 'finance']) };
    case 'vp':
      return { title: `VP of ${label}`, department: dept };
    case 'head':
      return { title: `Head of ${label}`, department: dept };
    case 'director':
      return { title: `Director of ${label}`, department: dept };
    case 'manager':
      return { title: `${label} Manager`, department: dept };
    case 'senior':
      return { title: `Senior ${role}`, department: dept };
    case 'intern':
      return { title: `${label} Intern`, department: dept };
    default:
      return { title: role, department: dept };
  }
}

/** Companies, then people working at them (emails on their company's domain). */
export function leadTables(seed: number, sizes: Sizes): TableRows[] {
  const rng = new Random(seed * 1_000_003 + 11);
  const companies: GeneratedCompany[] = [];
  const companyRows: unknown[][] = [];
  const domains = new UniqueNames();

  for (let id = 1; id <= sizes.companies; id++) {
    const industry = rng.pick(INDUSTRIES);
    const name = [rng.pick(COMPANY_PREFIXES), rng.pick(industry.nameWords), rng.pick(NAME_SUFFIXES)]
      .filter(Boolean)
      .join(' ');
    const base = ascii(name);
    const tld = weighted(rng, TLDS);
    const domain = domains.take(`${base}.${tld}`, (_, n) => (n === 0 ? `${base}.${tld}` : `${base}${n}.${tld}`));
    const handle = domain.replace(/\.[a-z]+$/, '');
    const [band, min, max] = weighted(
      rng,
      SIZE_BANDS.map((b) => [b, b[3]] as const),
    );
    const employees = rng.int(min, max);
    const city = rng.chance(0.85) ? rng.pick(US_CITIES) : rng.pick(WORLD_CITIES);
    const revenue = Math.round((employees * industry.revenuePerEmployee * rng.int(60, 140)) / 100 / 1000) * 1000;
    const phone = phoneIn(rng, city);
    companies.push({
      id,
      domain,
      city,
      employees,
      phone,
      emailPattern: weighted(rng, EMAIL_PATTERNS),
      industry: industry.name.toLowerCase(),
    });
    companyRows.push([
      id,
      domain,
      name,
      industry.name,
      band,
      employees,
      revenue,
      city.city,
      city.state,
      city.country,
      sample(rng, industry.keywords, rng.int(2, 5)),
      sample(rng, TECHNOLOGIES, rng.int(3, 14)),
      rng.int(1950, 2023),
      phone,
      `https://www.linkedin.com/company/${handle}`,
      rng.chance(0.6) ? `https://twitter.com/${handle}` : null,
      rng.chance(0.5) ? `https://www.facebook.com/${handle}` : null,
    ]);
  }

  // People per company grow with the square root of its size; the total is exactly sizes.people.
  const weights = companies.map((c) => Math.sqrt(c.employees));
  const totalWeight = weights.reduce((a, b) => a + b, 0);
  const perCompany = weights.map((w) => Math.max(1, Math.floor((w / totalWeight) * sizes.people)));
  let assigned = perCompany.reduce((a, b) => a + b, 0);
  for (let i = 0; assigned !== sizes.people; i = (i + 1) % perCompany.length) {
    const count = perCompany[i] ?? 0;
    if (assigned < sizes.people) {
      perCompany[i] = count + 1;
      assigned += 1;
    } else if (count > 1) {
      perCompany[i] = count - 1;
      assigned -= 1;
    }
  }

  const people = {
    dataset: 'people',
    table: 'person',
    columns: [
      'id',
      'company_id',
      'first_name',
      'last_name',
      'title',
      'seniority',
      'department',
      'email',
      'email_status',
      'phone',
      'mobile',
      'linkedin_url',
      'city',
      'state',
      'country',
      'company_industry',
    ],
    count: sizes.people,
    *rows() {
      const prng = new Random(seed * 1_000_003 + 23);
      let id = 0;
      for (const [index, company] of companies.entries()) {
        const used = new Set<string>();
        const count = perCompany[index] ?? 0;
        for (let k = 0; k < count; k++) {
          id += 1;
          const first = prng.pick(FIRST_NAMES);
          const last = prng.pick(LAST_NAMES);
          // The first person of each company leads it.
          const seniority =
            k === 0
              ? company.employees <= 10
                ? prng.pick(['owner', 'founder'])
                : 'c_suite'
              : weighted(prng, SENIORITY_WEIGHTS);
          const { title, department } =
            k === 0 && seniority === 'c_suite' ? { title: 'CEO', department: 'executive' } : titleFor(prng, seniority);
          let local = company.emailPattern(ascii(first), ascii(last));
          for (let n = 2; used.has(local); n++) local = `${company.emailPattern(ascii(first), ascii(last))}${n}`;
          used.add(local);
          const hasEmail = prng.chance(0.9);
          const city = prng.chance(0.8) ? company.city : prng.pick(US_CITIES);
          yield [
            id,
            company.id,
            first,
            last,
            title,
            seniority,
            department,
            hasEmail ? `${local}@${company.domain}` : null,
            (hasEmail ? (prng.chance(0.78) ? 'verified' : 'guessed') : 'unavailable') satisfies LeadEmailStatus,
            prng.chance(0.5) ? company.phone : null,
            prng.chance(0.35) ? phoneIn(prng, city) : null,
            `https://www.linkedin.com/in/${ascii(first)}-${ascii(last)}-${id.toString(36)}`,
            city.city,
            city.state,
            city.country,
            // The copy of the company's industry the search filters on (migration 0013).
            company.industry,
          ];
        }
      }
    },
  } satisfies TableRows;

  return [
    {
      dataset: 'companies',
      table: 'company',
      columns: [
        'id',
        'domain',
        'name',
        'industry',
        'size_band',
        'employees_count',
        'annual_revenue',
        'city',
        'state',
        'country',
        'keywords',
        'technologies',
        'founded',
        'phone',
        'linkedin_url',
        'twitter_url',
        'facebook_url',
      ],
      count: companyRows.length,
      rows: () => companyRows as never,
    },
    people,
  ];
}
