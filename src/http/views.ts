import type { StartedRun } from '../runs/runs.ts';
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

/** The start answer of the faces that speak REST (REST itself, MCP): run id and status, message, the tool's own fields. */
export const restStartView = ({ run, start }: StartedRun) => ({ runId: run.id, status: run.status, message: start.message, ...start.extra });
