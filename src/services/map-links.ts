/**
 * Map-search links, in the well-known shape
 *   https://<any host>/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z
 *   https://<any host>/maps/place/Blue+Bottle+Coffee/@39.75,-104.99,17z
 * Only the path and query are read, so any host works.
 */
export interface MapCenter {
  lat: number;
  lng: number;
  zoom: number;
}

export type MapLink =
  | { kind: 'search'; keywords: string; place?: string; center?: MapCenter }
  | { kind: 'place'; name: string; center?: MapCenter };

const CENTER = /^@(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)(?:,(\d+(?:\.\d+)?)z)?/;
const IN_PLACE = /^(.+?)\s+(?:in|near)\s+(.+)$/i;

const decode = (segment: string) => decodeURIComponent(segment.replace(/\+/g, ' ')).replace(/\s+/g, ' ').trim();

function readCenter(segments: string[]): MapCenter | undefined {
  for (const segment of segments) {
    const m = CENTER.exec(segment);
    if (m) {
      const lat = Number(m[1]);
      const lng = Number(m[2]);
      if (Math.abs(lat) <= 90 && Math.abs(lng) <= 180) return { lat, lng, zoom: m[3] ? Number(m[3]) : 13 };
    }
  }
  return undefined;
}

/** Splits "dentists in Denver, CO" into keywords and place. */
export function splitQuery(query: string): { keywords: string; place?: string } {
  const m = IN_PLACE.exec(query);
  return m ? { keywords: m[1]!.trim(), place: m[2]!.trim() } : { keywords: query.trim() };
}

/** Reads a map link; throws an Error whose message explains what is wrong. */
export function parseMapLink(link: string): MapLink {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new Error('is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('must be an http(s) link');
  const segments = url.pathname.split('/').filter(Boolean);
  const center = readCenter(segments);
  const at = segments.indexOf('maps');
  const kind = at >= 0 ? segments[at + 1] : undefined;
  const text = at >= 0 && segments[at + 2] && !segments[at + 2]!.startsWith('@') ? decode(segments[at + 2]!) : undefined;
  if (kind === 'place' && text) return { kind: 'place', name: text, center };
  const query = text ?? url.searchParams.get('q') ?? url.searchParams.get('query') ?? undefined;
  if ((kind === 'search' || at >= 0) && query) return { kind: 'search', ...splitQuery(decode(query)), center };
  if (at >= 0 && kind === 'search' && center) return { kind: 'search', keywords: '', center };
  throw new Error('is not a map search or place link (expected /maps/search/<words>/@lat,lng,zoom or /maps/place/<name>)');
}
