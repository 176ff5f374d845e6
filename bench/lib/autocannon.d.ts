declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      pipelining?: number;
      workers?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      /** Each response's body must be exactly this; others count as `mismatches`. */
      expectBody?: string;
    }
    interface Stats {
      average: number;
      mean: number;
      min: number;
      max: number;
      p50: number;
      p90: number;
      p99: number;
      total: number;
    }
    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      mismatches: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      requests: Stats & { sent: number };
      latency: Stats;
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export = autocannon;
}
