import type { BenchEnv } from './env.ts';

export interface RunView {
  runId: string;
  status: string;
  statusMessage: string;
  handled: number;
  requested: number;
  runTimeSecs: number | null;
  outputUrl: string | null;
}

async function call<T>(env: BenchEnv, method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
  const response = await fetch(`${env.baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${env.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route} → ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

export const startMapsRun = (env: BenchEnv, input: Record<string, unknown>) =>
  call<{ runId: string; status: string }>(env, 'POST', '/api/v1/scrape/maps', input);

export const getRunView = (env: BenchEnv, runId: string) => call<RunView>(env, 'GET', `/api/v1/scrape/status/${runId}`);

export async function waitForStatus(env: BenchEnv, runId: string, status: string, timeoutMs = 30_000): Promise<RunView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await getRunView(env, runId);
    if (view.status === status) return view;
    if (['FAILED', 'ABORTED', 'TIMED-OUT'].includes(view.status) || Date.now() > deadline) {
      throw new Error(`run ${runId} is ${view.status} (${view.statusMessage}), expected ${status}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
