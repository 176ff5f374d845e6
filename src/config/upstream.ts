import { isOrigin, list } from './env.ts';

export interface ApifyConfig {
  /** APIFY_TOKEN; required when TOOL_SOURCES names a tool. Default none. */
  token: string | undefined;
  /**
   * APIFY_BASE_URL: the API's origin, fixed at start (callers never choose
   * where the gateway connects). Default https://api.apify.com.
   */
  baseUrl: string;
}

/** Where one tool runs upstream: the engine and the actor (`undefined`: the tool's declared default actor). */
export interface ToolSource {
  engine: 'apify';
  actorId: string | undefined;
}

/**
 * An Apify actor id as the API takes it in a path: `username~actor-name`
 * (or `username/actor-name`), or the actor's own id.
 */
const ACTOR_ID = /^(?:[A-Za-z0-9._-]{1,100}[~/][A-Za-z0-9._-]{1,100}|[A-Za-z0-9]{17})$/;

/**
 * APIFY_TOKEN, APIFY_BASE_URL and TOOL_SOURCES. The syntax is checked here; which tools may run
 * upstream is checked when the process builds its core (src/runs/upstream.ts), against the tools'
 * declarations.
 */
export function upstream(env: NodeJS.ProcessEnv): { apify: ApifyConfig; toolSources: Record<string, ToolSource> } {
  const baseUrl = (env.APIFY_BASE_URL || 'https://api.apify.com').replace(/\/+$/, '');
  if (!isOrigin(baseUrl)) {
    throw new Error(
      'APIFY_BASE_URL takes an origin such as https://api.apify.com (scheme, ' +
        `host and port only), got "${env.APIFY_BASE_URL}"`,
    );
  }
  const toolSources: Record<string, ToolSource> = {};
  for (const entry of list(env.TOOL_SOURCES)) {
    const [, tool, actor] = /^([a-z0-9-]+)=apify(?::(.+))?$/.exec(entry) ?? [];
    if (!tool)
      throw new Error(
        'TOOL_SOURCES takes tool=apify:<actorId> entries separated by commas (e.g. ' +
          `maps=apify:compass~crawler-google-places), got "${entry}"`,
      );
    if (actor !== undefined && !ACTOR_ID.test(actor))
      throw new Error(
        `TOOL_SOURCES: "${actor}" is not an Apify actor id (username~actor-name or the actor's 17-character id)`,
      );
    if (toolSources[tool]) throw new Error(`TOOL_SOURCES names ${tool} twice`);
    toolSources[tool] = { engine: 'apify', actorId: actor?.replace('/', '~') };
  }
  const token = env.APIFY_TOKEN || undefined;
  if (Object.keys(toolSources).length > 0 && !token)
    throw new Error(
      'TOOL_SOURCES runs tools on Apify: set APIFY_TOKEN (the API token of the Apify account that pays for the runs)',
    );
  return { apify: { token, baseUrl }, toolSources };
}
