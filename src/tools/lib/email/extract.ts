import type { AnyNode, Element } from 'domhandler';
import { findAll, getAttributeValue, textContent } from 'domutils';
import { parseDocument } from 'htmlparser2';
import { parseAddress } from './syntax.ts';
import { looksLikeJobTitle } from './titles.ts';

/** A person a page names, with what it says about them. */
export interface PagePerson {
  name: string;
  title: string | null;
  email: string | null;
  linkedinUrl: string | null;
  /** json-ld, microdata or team-card. */
  via: 'json-ld' | 'microdata' | 'team-card';
}

export interface PageLink {
  url: string;
  text: string;
}

export interface PageFacts {
  emails: string[];
  people: PagePerson[];
  links: PageLink[];
}

const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head']);
const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'dd',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'td',
  'th',
  'tr',
  'ul',
]);

const isElement = (node: AnyNode): node is Element =>
  node.type === 'tag' || node.type === 'script' || node.type === 'style';

/** The text a reader sees, one line per block element. */
export function visibleLines(nodes: readonly AnyNode[]): string[] {
  let out = '';
  const walk = (node: AnyNode) => {
    if (node.type === 'text') {
      out += (node as unknown as { data: string }).data;
      return;
    }
    if (!isElement(node) || SKIP.has(node.name)) return;
    const block = BLOCK.has(node.name);
    if (block) out += '\n';
    for (const child of node.children) walk(child);
    if (block) out += '\n';
  };
  for (const node of nodes) walk(node);
  return out
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

const EMAIL =
  /[a-z0-9][a-z0-9._%+'-]*@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.[a-z]{2,}/gi;
const OPEN = String.raw`[\[\(\{<]`;
const CLOSE = String.raw`[\]\)\}>]`;
/** name [at] domain [dot] com, name(at)domain.com, name {at} domain {dot} co {dot} uk … */
const BRACKETED = new RegExp(
  String.raw`([a-z0-9][a-z0-9._%+-]*)\s*${OPEN}\s*(?:at|@)\s*${CLOSE}\s*` +
    String.raw`([a-z0-9-]+(?:\s*(?:${OPEN}\s*(?:dot|\.)\s*${CLOSE}|\.)\s*[a-z0-9-]+)+)`,
  'gi',
);
/** name at domain dot com (both words, so "contact us at acme.com" is not read as an address). */
const SPELLED = /([a-z0-9][a-z0-9._%+-]*)\s+at\s+([a-z0-9-]+(?:\s+dot\s+[a-z0-9-]+)+)/gi;
const DOT_TOKEN = new RegExp(String.raw`\s*(?:${OPEN}\s*(?:dot|\.)\s*${CLOSE}|\s+dot\s+|\.)\s*`, 'gi');
const IMAGE_SUFFIX = /\.(png|jpe?g|gif|webp|svg|css|js)$/i;

/** A plausible address in canonical form (domain lower-cased), or null. */
function cleanEmail(raw: string): string | null {
  const text = raw
    .trim()
    .replace(/^mailto:/i, '')
    .replace(/[.,;:]+$/, '');
  if (IMAGE_SUFFIX.test(text)) return null; // retina image names such as logo@2x.png
  const parsed = parseAddress(text);
  return parsed.ok ? `${parsed.local.toLowerCase()}@${parsed.domain}` : null;
}

/** Addresses written out in text, including the usual obfuscations; an address never spans two lines. */
export function emailsInText(text: string): string[] {
  const found: string[] = [];
  for (const line of text.split('\n')) {
    for (const m of line.matchAll(EMAIL)) found.push(m[0]);
    for (const [, local, domain = ''] of line.matchAll(BRACKETED))
      found.push(`${local}@${domain.replace(DOT_TOKEN, '.')}`);
    for (const [, local, domain = ''] of line.matchAll(SPELLED))
      found.push(`${local}@${domain.replace(DOT_TOKEN, '.')}`);
  }
  return found.map(cleanEmail).filter((e): e is string => e !== null);
}

/** Cloudflare's email protection: a hex string XOR-ed with its first byte. */
export function decodeCloudflareEmail(hex: string): string | null {
  if (!/^[0-9a-f]{4,}$/i.test(hex) || hex.length % 2 !== 0) return null;
  const key = Number.parseInt(hex.slice(0, 2), 16);
  let out = '';
  for (let i = 2; i < hex.length; i += 2) out += String.fromCharCode(Number.parseInt(hex.slice(i, i + 2), 16) ^ key);
  return cleanEmail(out);
}

function emailFromHref(href: string | undefined): string | null {
  if (!href) return null;
  if (/^mailto:/i.test(href)) {
    let address = href.slice(7).split('?')[0] ?? '';
    try {
      address = decodeURIComponent(address);
    } catch {
      // keep as written
    }
    return cleanEmail(address.split(',')[0] ?? '');
  }
  const [, protectedHex] = /\/cdn-cgi\/l\/email-protection#([0-9a-f]+)/i.exec(href) ?? [];
  return protectedHex ? decodeCloudflareEmail(protectedHex) : null;
}

function elementEmails(root: readonly AnyNode[]): string[] {
  const found: string[] = [];
  for (const el of findAll(
    (e) => e.name === 'a' || getAttributeValue(e, 'data-cfemail') !== undefined,
    root as AnyNode[],
  )) {
    const viaHref = emailFromHref(getAttributeValue(el, 'href'));
    if (viaHref) found.push(viaHref);
    const cf = getAttributeValue(el, 'data-cfemail');
    const decoded = cf ? decodeCloudflareEmail(cf) : null;
    if (decoded) found.push(decoded);
  }
  return found;
}

const NAME_WORD = /^[A-Z][a-zA-Z'’.-]*$|^(van|von|de|der|del|da|di|la|le|du|bin|al)$/;
const NOT_NAMES = new RegExp(
  String.raw`\b(team|our|meet|about|contact|read|more|view|profile|leadership|company|services|careers|news|home|` +
    String.raw`menu|board|directors|management|people|staff|us|the)\b`,
  'i',
);

/** "Jane Doe", "Mary-Ann van der Berg", "J. R. Smith": two to five capitalised words, no digits. */
export function looksLikePersonName(text: string): boolean {
  const t = text.trim();
  if (t.length < 4 || t.length > 60 || /\d|@|[|:;!?]/.test(t) || NOT_NAMES.test(t)) return false;
  const words = t.split(/\s+/);
  if (words.length < 2 || words.length > 5) return false;
  return words.every((w) => NAME_WORD.test(w)) && /^[A-Z]/.test(words.at(-1) ?? '');
}

function linkedinIn(nodes: readonly AnyNode[]): string | null {
  for (const el of findAll((e) => e.name === 'a', nodes as AnyNode[])) {
    const href = getAttributeValue(el, 'href') ?? '';
    if (/linkedin\.com\/in\//i.test(href)) return href;
  }
  return null;
}

/** Every object typed Person in a JSON-LD value, however deep (employee, founder, member, @graph…). */
function jsonLdPeople(value: unknown, out: PagePerson[]) {
  if (Array.isArray(value)) {
    for (const v of value) jsonLdPeople(v, out);
    return;
  }
  if (!value || typeof value !== 'object') return;
  const obj = value as Record<string, unknown>;
  const type = obj['@type'];
  const types = Array.isArray(type) ? type : [type];
  if (types.some((t) => typeof t === 'string' && /(^|\/)Person$/.test(t))) {
    const name =
      typeof obj.name === 'string'
        ? obj.name
        : [obj.givenName, obj.familyName].filter((v) => typeof v === 'string').join(' ');
    if (name.trim()) {
      const sameAs = (Array.isArray(obj.sameAs) ? obj.sameAs : [obj.sameAs]).find(
        (s) => typeof s === 'string' && /linkedin\.com\/in\//i.test(s),
      );
      out.push({
        name: name.trim(),
        title: typeof obj.jobTitle === 'string' ? obj.jobTitle.trim() : null,
        email: typeof obj.email === 'string' ? cleanEmail(obj.email) : null,
        linkedinUrl: typeof sameAs === 'string' ? sameAs : null,
        via: 'json-ld',
      });
    }
  }
  for (const [key, v] of Object.entries(obj)) if (key !== '@context') jsonLdPeople(v, out);
}

function itemprop(scope: Element, prop: string): string | null {
  const el = findAll((e) => (getAttributeValue(e, 'itemprop') ?? '').split(/\s+/).includes(prop), scope.children)[0];
  if (!el) return null;
  const value =
    getAttributeValue(el, 'content') ??
    (el.name === 'a' ? getAttributeValue(el, 'href') : undefined) ??
    textContent(el);
  return value.replace(/\s+/g, ' ').trim() || null;
}

const CARD = new RegExp(
  String.raw`(^|[\s_-])(team|member|members|person|people|staff|employee|leader|leaders|leadership|bio|profile|` +
    String.raw`founder|founders|executive|executives|partner|partners|card)([\s_-]|s?$)`,
  'i',
);
const TITLE_CLASS = /(title|position|role|job|designation|occupation)/i;

function classOf(el: Element): string {
  return `${getAttributeValue(el, 'class') ?? ''} ${getAttributeValue(el, 'id') ?? ''}`;
}

/** People in team-card markup: a block whose class names a person or team member, holding a name and a job title. */
function teamCardPeople(root: readonly AnyNode[]): PagePerson[] {
  const out: PagePerson[] = [];
  const cards = findAll((e) => CARD.test(classOf(e)), root as AnyNode[]);
  // Innermost cards only: a team section holding member cards is not itself one person.
  const innermost = cards.filter((card) => !cards.some((other) => other !== card && contains(card, other)));
  for (const card of innermost) {
    const lines = visibleLines(card.children);
    const nameIndex = lines.findIndex(looksLikePersonName);
    const name = lines[nameIndex];
    if (name === undefined) continue;
    const titled = findAll((e) => TITLE_CLASS.test(getAttributeValue(e, 'class') ?? ''), card.children)
      .map((e) => textContent(e).replace(/\s+/g, ' ').trim())
      .find((t) => t && t.length <= 120);
    const title = titled ?? lines.slice(nameIndex + 1).find((l) => l.length <= 120 && looksLikeJobTitle(l)) ?? null;
    if (!title) continue;
    const email = elementEmails(card.children)[0] ?? emailsInText(lines.join('\n'))[0] ?? null;
    out.push({ name, title, email, linkedinUrl: linkedinIn(card.children), via: 'team-card' });
  }
  // Plain layouts: a heading with a name, the next element a job title.
  for (const heading of findAll((e) => /^(h[2-6]|strong|b)$/.test(e.name), root as AnyNode[])) {
    const name = textContent(heading).replace(/\s+/g, ' ').trim();
    if (!looksLikePersonName(name)) continue;
    let next = heading.next;
    while (next && !isElement(next) && !(next.type === 'text' && (next as unknown as { data: string }).data.trim()))
      next = next.next;
    if (!next) continue;
    const title = (next.type === 'text' ? (next as unknown as { data: string }).data : textContent(next))
      .replace(/\s+/g, ' ')
      .trim();
    if (!title || title.length > 120 || !looksLikeJobTitle(title)) continue;
    const container = heading.parent ? [heading.parent] : [];
    out.push({
      name,
      title,
      email: elementEmails(container)[0] ?? null,
      linkedinUrl: linkedinIn(container),
      via: 'team-card',
    });
  }
  return out;
}

function contains(outer: Element, inner: AnyNode): boolean {
  for (let node = inner.parent; node; node = node.parent) if (node === outer) return true;
  return false;
}

const nameKey = (name: string) => name.toLowerCase().replace(/[^a-z]/g, '');

/** Addresses, people and links of one HTML page. */
export function extractPage(html: string, pageUrl: string): PageFacts {
  const doc = parseDocument(html, { decodeEntities: true });
  const nodes = doc.children;
  const emails = new Set<string>([...elementEmails(nodes), ...emailsInText(visibleLines(nodes).join('\n'))]);

  const people: PagePerson[] = [];
  for (const script of findAll(
    (e) => e.name === 'script' && (getAttributeValue(e, 'type') ?? '').toLowerCase() === 'application/ld+json',
    nodes,
  )) {
    try {
      jsonLdPeople(JSON.parse(textContent(script)), people);
    } catch {
      // a broken block is skipped; the rest of the page still counts
    }
  }
  for (const scope of findAll((e) => /schema\.org\/Person/i.test(getAttributeValue(e, 'itemtype') ?? ''), nodes)) {
    const name =
      itemprop(scope, 'name') ??
      [itemprop(scope, 'givenName'), itemprop(scope, 'familyName')].filter(Boolean).join(' ');
    if (!name) continue;
    const email = itemprop(scope, 'email');
    people.push({
      name,
      title: itemprop(scope, 'jobTitle'),
      email: email ? cleanEmail(email) : null,
      linkedinUrl: linkedinIn(scope.children),
      via: 'microdata',
    });
  }
  people.push(...teamCardPeople(nodes));

  // One entry per name: structured data first, the first title and address seen kept.
  const merged = new Map<string, PagePerson>();
  for (const person of people) {
    const key = nameKey(person.name);
    if (!key) continue;
    const seen = merged.get(key);
    if (!seen) merged.set(key, { ...person });
    else {
      seen.title ??= person.title;
      seen.email ??= person.email;
      seen.linkedinUrl ??= person.linkedinUrl;
    }
  }
  for (const person of merged.values()) if (person.email) emails.add(person.email);

  const links: PageLink[] = [];
  for (const a of findAll((e) => e.name === 'a', nodes)) {
    const href = getAttributeValue(a, 'href');
    if (!href || /^(mailto|tel|javascript|data):/i.test(href)) continue;
    try {
      const url = new URL(href, pageUrl);
      url.hash = '';
      links.push({ url: url.href, text: textContent(a).replace(/\s+/g, ' ').trim().slice(0, 100) });
    } catch {
      // not a link
    }
  }
  return { emails: [...emails], people: [...merged.values()], links };
}
