/**
 * Running a run again: the same tool started with the input the run was started with (as stored, after
 * defaults and caps), its dataset choice and its destinations; an ordinary start with its own estimate,
 * hold and bill, refused as any start would be. A per-run webhook is not carried over (its secret was
 * shown once, to whoever started the first).
 */
import type { Principal } from '../accounts/accounts.ts';
import { getTool } from '../tools/index.ts';
import { ValidationError } from '../shared/errors.ts';
import { getRun } from './read.ts';
import { dryRunStart, type StartDeps, startRun, type StartedRun } from './start.ts';

/** The start body that runs `run` again. */
function againBody(run: Awaited<ReturnType<typeof getRun>>): Record<string, unknown> {
  const input = { ...(run.input as Record<string, unknown>) };
  if (run.datasetName && !('datasetName' in input)) input.datasetName = run.datasetName;
  if (run.onlyNew) input.onlyNew = true;
  if (run.destinationIds?.length) input.destinations = run.destinationIds;
  return input;
}

/**
 * Starts the caller's run `runId` again (or, `dryRun`, answers what that start would hold without
 * starting it). 404 for no such run in the account; 400 for a run only its parent starts (a property
 * lookup's owner contact).
 */
export async function startRunAgain(
  core: StartDeps,
  principal: Principal,
  runId: string,
  options: { dryRun?: boolean } = {},
): Promise<StartedRun> {
  const run = await getRun(core.db, principal.accountId, runId);
  const tool = getTool(run.tool);
  if (tool.linkedOnly)
    throw new ValidationError([
      { path: 'id', message: `${tool.title} runs only with the run that starts it: start that run again` },
    ]);
  const body = againBody(run);
  return options.dryRun ? dryRunStart(core, principal, run.tool, body) : startRun(core, principal, run.tool, body);
}
