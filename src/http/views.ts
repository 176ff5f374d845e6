import { outputUrl, runTimeSecs, type RunSnapshot } from '../runs/view.ts';

/**
 * The wire shapes of runs that REST answers and MCP answers too (MCP answers exactly what REST does).
 * GraphQL has its own types; the declared endpoints' answers are in their declarations (`respond`).
 */

/** The spec's Run object, plus when its results expire. */
export function restRunView(publicUrl: string, run: RunSnapshot) {
  return {
    runId: run.id,
    status: run.status,
    statusMessage: run.statusMessage,
    handled: run.handled,
    requested: run.requested,
    runTimeSecs: runTimeSecs(run),
    outputUrl: outputUrl(publicUrl, run),
    expiresAt: run.expiresAt,
  };
}
