import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { WebClient, WebResponse } from '../sources/contacts.ts';
import { NetError } from './errors.ts';
import type { OutboundGuard, Target } from './guard.ts';

export interface WebLimits {
  /** Milliseconds for the whole fetch, redirects included. */
  timeoutMs: number;
  /** Bytes read at most, after decompression; the rest is cut (`truncated`). */
  maxBytes: number;
  maxRedirects: number;
  userAgent: string;
  /** Certificates trusted for TLS besides the system's (tests' local servers). */
  trustedCa?: readonly string[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

type Raw =
  | { kind: 'redirect'; status: number; location: string }
  | { kind: 'body'; status: number; contentType: string; body: Buffer; truncated: boolean };

/** A lookup that answers with the address the guard checked, so the connection cannot go elsewhere. */
function pinnedLookup(target: Target): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as LookupFunction;
}

function connectionError(err: NodeJS.ErrnoException, shown: string): NetError {
  if (err instanceof NetError) return err;
  const code = err.code ?? '';
  if (code === 'ECONNREFUSED') return new NetError('connect', shown, 'connection refused');
  if (code === 'ECONNRESET') return new NetError('connect', shown, 'connection reset by the server');
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return new NetError('connect', shown, 'host unreachable');
  if (
    code.startsWith('ERR_SSL') ||
    code.startsWith('CERT_') ||
    code === 'EPROTO' ||
    code.includes('CERT') ||
    code.includes('TLS')
  ) {
    return new NetError('tls', shown, `TLS failed: ${err.message}`);
  }
  if (code === 'HPE_INVALID_CONSTANT' || code.startsWith('HPE_'))
    return new NetError('protocol', shown, 'the server did not answer with HTTP');
  return new NetError('connect', shown, err.message || code || 'connection failed');
}

function decoder(res: http.IncomingMessage): Readable {
  switch ((res.headers['content-encoding'] ?? '').toLowerCase().trim()) {
    case 'gzip':
    case 'x-gzip':
      return res.pipe(zlib.createGunzip());
    case 'deflate':
      return res.pipe(zlib.createInflate());
    case 'br':
      return res.pipe(zlib.createBrotliDecompress());
    default:
      return res;
  }
}

interface Outgoing {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

const GET: Outgoing = { method: 'GET', headers: {} };

function requestOnce(
  url: URL,
  target: Target,
  deadline: number,
  limits: WebLimits,
  signal?: AbortSignal,
  outgoing: Outgoing = GET,
): Promise<Raw> {
  const shown = url.href;
  return new Promise<Raw>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const fail = (err: NetError) => {
      finish(() => reject(err));
      req.destroy();
    };
    const remaining = deadline - Date.now();
    const timer = setTimeout(
      () => fail(new NetError('timeout', shown, `no complete answer within ${limits.timeoutMs} ms`)),
      Math.max(0, remaining),
    );
    const onAbort = () => fail(new NetError('aborted', shown, 'the run was cancelled'));
    signal?.addEventListener('abort', onAbort, { once: true });

    const module = url.protocol === 'https:' ? https : http;
    const req = module.request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: target.port,
      path: `${url.pathname}${url.search}`,
      method: outgoing.method,
      agent: false,
      lookup: pinnedLookup(target),
      ...(url.protocol === 'https:' && limits.trustedCa?.length
        ? { ca: [...tls.rootCertificates, ...limits.trustedCa] }
        : {}),
      headers: {
        'user-agent': limits.userAgent,
        accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5',
        'accept-encoding': 'gzip, deflate, br',
        'accept-language': 'en',
        ...outgoing.headers,
        ...(outgoing.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(outgoing.body)) }),
      },
    });
    req.on('error', (err) => fail(connectionError(err, shown)));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (outgoing.method === 'GET' && REDIRECTS.has(status) && location) {
        res.resume();
        finish(() => resolve({ kind: 'redirect', status, location }));
        req.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const stream = decoder(res);
      const done = () =>
        finish(() =>
          resolve({
            kind: 'body',
            status,
            contentType: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks),
            truncated,
          }),
        );
      stream.on('data', (chunk: Buffer) => {
        if (settled) return;
        const room = limits.maxBytes - size;
        if (chunk.length >= room) {
          chunks.push(chunk.subarray(0, room));
          size = limits.maxBytes;
          truncated = true;
          done();
          req.destroy();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      stream.on('end', done);
      stream.on('error', (err) =>
        fail(
          err instanceof NetError ? err : new NetError('protocol', shown, `could not read the body: ${err.message}`),
        ),
      );
      res.on('error', (err) => fail(connectionError(err, shown)));
    });
    req.end(outgoing.body);
  });
}

function textOf(body: Buffer, contentType: string): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/**
 * GET through the guard: every hop is checked and connected to the checked address; time, size and redirects limited.
 */
export async function guardedGet(
  guard: OutboundGuard,
  input: string | URL,
  limits: WebLimits,
  signal?: AbortSignal,
): Promise<WebResponse> {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    throw new NetError('refused', String(input).slice(0, 200), 'not a valid URL');
  }
  const deadline = Date.now() + limits.timeoutMs;
  for (let hop = 0; ; hop++) {
    if (signal?.aborted) throw new NetError('aborted', url.href, 'the run was cancelled');
    const target = await guard.checkUrl(url).catch((err: unknown) => {
      if (hop > 0 && err instanceof NetError)
        throw new NetError(err.kind, url.href, `redirected to ${url.href}: ${err.message}`);
      throw err;
    });
    const raw = await requestOnce(url, target, deadline, limits, signal);
    if (raw.kind === 'body') {
      return {
        url: url.href,
        status: raw.status,
        contentType: raw.contentType,
        body: textOf(raw.body, raw.contentType),
        truncated: raw.truncated,
      };
    }
    if (hop >= limits.maxRedirects)
      throw new NetError('redirects', url.href, `more than ${limits.maxRedirects} redirects`);
    let next: URL;
    try {
      next = new URL(raw.location, url);
    } catch {
      throw new NetError('protocol', url.href, `redirect to an invalid location "${raw.location.slice(0, 100)}"`);
    }
    url = next;
  }
}

/**
 * POST through the guard (webhook deliveries): the target is checked and connected to like a GET,
 * within the same time and size limits. Redirects are not followed: a 3xx is the receiver's answer.
 */
export async function guardedPost(
  guard: OutboundGuard,
  input: string | URL,
  body: string,
  headers: Record<string, string>,
  limits: WebLimits,
  signal?: AbortSignal,
): Promise<{ status: number; body: string }> {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    throw new NetError('refused', String(input).slice(0, 200), 'not a valid URL');
  }
  const target = await guard.checkUrl(url);
  const raw = await requestOnce(url, target, Date.now() + limits.timeoutMs, limits, signal, {
    method: 'POST',
    headers,
    body,
  });
  if (raw.kind !== 'body') throw new NetError('protocol', url.href, 'unexpected redirect handling');
  return { status: raw.status, body: textOf(raw.body, raw.contentType) };
}

/** The web as the crawler sees it: sites on the configured ports, fetched through the guard. */
export function createWebClient(
  guard: OutboundGuard,
  limits: WebLimits,
  ports: { http: number; https: number },
): WebClient {
  return {
    siteUrl(domain, scheme) {
      const url = new URL(`${scheme}://${domain}/`);
      url.port = String(ports[scheme]);
      return url;
    },
    get: (url, signal) => guardedGet(guard, url, limits, signal),
  };
}
