import autocannon from 'autocannon';
import { round } from './stats.ts';

export interface LoadTarget {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadRound {
  reqPerSec: number;
  /** Mean latency, finer grained than autocannon's whole-millisecond percentiles. */
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
}

/** autocannon in one worker thread; throws on any error, timeout or non-2xx answer. */
export async function load(target: LoadTarget, connections: number, duration: number): Promise<LoadRound> {
  const { url, method = 'GET', headers = {}, body } = target;
  const result = await autocannon({ url, method, headers, body, connections, duration, pipelining: 1, workers: 1 });
  const failures = result.errors + result.timeouts + result.non2xx;
  if (failures > 0 || result['2xx'] === 0) {
    throw new Error(
      `load on ${method} ${url} failed: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx ` +
        `(${JSON.stringify(result.statusCodeStats)}), ${result['2xx']} 2xx`,
    );
  }
  return { reqPerSec: round(result.requests.average), meanMs: round(result.latency.average, 2), p50Ms: result.latency.p50, p99Ms: result.latency.p99, requests: result['2xx'] };
}
