import path from 'node:path';

/** California's DROP (docs/drop.md): the scheduled deletion cycle, when the operator gives its API key. */
export interface DropConfig {
  /** DROP_API_KEY: the data broker's key from the DROP portal; unset, no cycle is scheduled. */
  apiKey: string | undefined;
  /** DROP_API_URL: default production; `sandbox` (or its URL) for DROP's sandbox, a local fake in tests. */
  baseUrl: string;
  /** DROP_DIR: where downloaded archives and the response files are kept. Default `<LEADGATE_DATA_DIR>/drop`. */
  dir: string;
}

const PRODUCTION = 'https://api.drop.privacy.ca.gov';
const SANDBOX = 'https://api.drop.privacy.ca.gov/sandbox';

/** DROP_API_KEY, DROP_API_URL and DROP_DIR (see DropConfig). */
export function drop(env: NodeJS.ProcessEnv, dataDir: string): DropConfig {
  const url = env.DROP_API_URL === 'sandbox' ? SANDBOX : env.DROP_API_URL || PRODUCTION;
  const parsed = new URL(url);
  if (!['http:', 'https:'].includes(parsed.protocol))
    throw new Error('DROP_API_URL must be an http(s) URL or "sandbox"');
  return {
    apiKey: env.DROP_API_KEY || undefined,
    baseUrl: url.replace(/\/+$/, ''),
    dir: path.resolve(env.DROP_DIR || path.join(dataDir, 'drop')),
  };
}
