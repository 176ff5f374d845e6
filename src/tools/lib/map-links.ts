/**
 * Map-search links, in the well-known shape
 *   https://<any host>/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z
 *   https://<any host>/maps/place/Blue+Bottle+Coffee/@39.75,-104.99,17z/data=!3m1!4b1!4m5!3m4!8m2!3d39.7531!4d-104.9942
 *   https://<any host>/maps/place/?q=place_id:ChIJN1t_tDeuEmsRUsoyG83frY4
 *   https://<any host>/maps/search/?api=1&query=Summit+Dental&query_place_id=ChIJ…
 * Only the path and query are read, so any host works.
 */
import { httpLink } from '../../shared/geo.ts';
export interface MapCenter {
  lat: number;
  lng: number;
  zoom: number;
}

export interface MapPoint {
  lat: number;
  lng: number;
}

export type MapLink =
  | { kind: 'search'; keywords: string; place?: string; center?: MapCenter }
  | {
      kind: 'place';
      /** The place's name as the link spells it; absent in bare place-id links. */
      name?: string;
      /** The place's stable identifier, when the link carries one. */
      placeId?: string;
      /** Centre of the map view. */
      center?: MapCenter;
      /** The place itself (`!3d<lat>!4d<lng>` in the link's data), more exact than the view's centre. */
      point?: MapPoint;
    };

const CENTER = /^@(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)(?:,(\d+(?:\.\d+)?)z)?/;
const POINT = /!3d(-?\d+(?:\.\d+)?)!4d(-?\d+(?:\.\d+)?)/;
const PLACE_ID = /^[A-Za-z0-9_-]{10,}$/;
const DATA_PLACE_ID = /!19s([A-Za-z0-9_-]{10,})/;
const IN_PLACE = /^(.+?)\s+(?:in|near)\s+(.+)$/i;

const decode = (segment: string) => decodeURIComponent(segment.replace(/\+/g, ' ')).replace(/\s+/g, ' ').trim();

const onGlobe = (lat: number, lng: number) => Math.abs(lat) <= 90 && Math.abs(lng) <= 180;

function readCenter(segments: string[]): MapCenter | undefined {
  for (const segment of segments) {
    const m = CENTER.exec(segment);
    if (m) {
      const lat = Number(m[1]);
      const lng = Number(m[2]);
      if (onGlobe(lat, lng)) return { lat, lng, zoom: m[3] ? Number(m[3]) : 13 };
    }
  }
  return undefined;
}

function readPoint(path: string): MapPoint | undefined {
  const m = POINT.exec(path);
  if (!m) return undefined;
  const lat = Number(m[1]);
  const lng = Number(m[2]);
  return onGlobe(lat, lng) ? { lat, lng } : undefined;
}

/** A place id from `q=place_id:…`, `query_place_id=…` or the link's data (`!19s…`). */
function readPlaceId(url: URL): string | undefined {
  const q = url.searchParams.get('q') ?? url.searchParams.get('query') ?? '';
  const fromQuery = /^place_id:(.+)$/i.exec(q.trim())?.[1] ?? url.searchParams.get('query_place_id') ?? undefined;
  if (fromQuery !== undefined) {
    if (!PLACE_ID.test(fromQuery.trim())) throw new Error(`has a malformed place id "${fromQuery}"`);
    return fromQuery.trim();
  }
  return DATA_PLACE_ID.exec(decodeURIComponent(url.pathname))?.[1];
}

/** Splits "dentists in Denver, CO" into keywords and place. */
export function splitQuery(query: string): { keywords: string; place?: string } {
  const [, keywords, place] = IN_PLACE.exec(query) ?? [];
  return keywords && place ? { keywords: keywords.trim(), place: place.trim() } : { keywords: query.trim() };
}

/** Reads a map link; throws an Error whose message explains what is wrong. */
export function parseMapLink(link: string): MapLink {
  const url = httpLink(link);
  const segments = url.pathname.split('/').filter(Boolean);
  const center = readCenter(segments);
  const at = segments.indexOf('maps');
  const kind = at >= 0 ? segments[at + 1] : undefined;
  const textSegment = at >= 0 ? segments[at + 2] : undefined;
  const text = textSegment && !textSegment.startsWith('@') ? decode(textSegment) : undefined;
  const placeId = at >= 0 ? readPlaceId(url) : undefined;
  if (placeId) {
    const query = url.searchParams.get('query');
    const name = kind === 'place' ? text : query && !/^place_id:/i.test(query) ? decode(query) : undefined;
    return { kind: 'place', placeId, ...(name ? { name } : {}), center, point: readPoint(url.pathname) };
  }
  if (kind === 'place' && text) return { kind: 'place', name: text, center, point: readPoint(url.pathname) };
  const query = text ?? url.searchParams.get('q') ?? url.searchParams.get('query') ?? undefined;
  if ((kind === 'search' || at >= 0) && query) return { kind: 'search', ...splitQuery(decode(query)), center };
  if (at >= 0 && kind === 'search' && center) return { kind: 'search', keywords: '', center };
  throw new Error(
    'is not a map search or place link (expected /maps/search/<words>/@lat,lng,zoom or /maps/place/<name>)',
  );
}

/** The place link the tools write into result rows; `parseMapLink` reads it back as that place. */
export const placeLink = (placeId: string) =>
  `https://www.google.com/maps/place/?q=place_id:${encodeURIComponent(placeId)}`;
