import { request as httpRequest } from 'node:http';
import type { ApiResponse } from './app.ts';

/**
 * A GET with a body, which fetch refuses to send: the spec's enrichment headings say GET while its
 * examples send a JSON body, and a client that follows the heading sends both.
 */
export function getWithBody(
  baseUrl: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers: Record<string, string> = {
    ...(payload !== undefined && options.rawBody === undefined ? { 'content-type': 'application/json' } : {}),
    ...(payload !== undefined ? { 'content-length': String(Buffer.byteLength(payload)) } : {}),
    ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    // The path goes as written (a fuzzer's raw escapes included), not normalised by URL.
    const { hostname, port } = new URL(baseUrl);
    const req = httpRequest({ hostname, port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        if ((res.headers['content-type'] ?? '').includes('json') && text) {
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
        }
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) answer.set(name, Array.isArray(value) ? value.join(', ') : value);
        resolve({ status: res.statusCode ?? 0, headers: answer, body: body as never, text });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}
