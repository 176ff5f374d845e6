import { isTerminal, outputUrl, priceRuleOf, runTimeSecs, type RunSnapshot } from '../runs/view.ts';

/**
 * The wire shapes of runs that REST answers and MCP answers too (MCP answers exactly what REST does).
 * GraphQL has its own types; the declared endpoints' answers are in their declarations (`respond`); a
 * start's answer is `startAnswerOf` (src/runs/start.ts), since an idempotency key stores it.
 */

/**
 * The spec's Run object, plus when its results expire, whether the run did all it was asked (`complete`)
 * and why it stopped short (`stoppedReason`), both null until it ends; once the run has ended, what it was charged
 * (`cost`, USD), the units charged (`billed_units`) and the price rule it was billed by, so each
 * charge can be checked against the price table (cost = billed_units × price_rule.unit_price); for a
 * run that names a dataset, its name, `onlyNew` and the rows skipped as delivered before.
 */
export function restRunView(publicUrl: string, run: RunSnapshot) {
  return {
    runId: run.id,
    status: run.status,
    statusMessage: run.statusMessage,
    complete: run.complete,
    stoppedReason: run.stoppedReason,
    handled: run.handled,
    requested: run.requested,
    runTimeSecs: runTimeSecs(run),
    outputUrl: outputUrl(publicUrl, run),
    expiresAt: run.expiresAt,
    ...(run.datasetName
      ? { datasetName: run.datasetName, onlyNew: run.onlyNew, skippedDelivered: run.skippedDelivered }
      : {}),
    ...(run.suppressed > 0 ? { suppressed: run.suppressed } : {}),
    ...(isTerminal(run.status)
      ? { cost: run.cost, billed_units: run.billedUnits, price_rule: priceRuleOf(run.tool) }
      : {}),
  };
}
