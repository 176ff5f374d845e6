/**
 * The run engine's front: what the worker's tasks, the run services and the faces call. Each concern
 * is a system beside it, taking only the part of the core it uses: `execute.ts` (a run iterated to its
 * end), `batches.ts` (rows stored and billed), `finish.ts` (the end, its hold settled, the next run
 * started) and `stops.ts` (cancels, time limits, hand-backs). The queue that places runs is
 * `runs/queue.ts`.
 */
export { executeRun, type EngineDeps } from './execute.ts';
export { finishRun, finishRunInTx } from './finish.ts';
export { cancelLockedRun, cancelRun, runTimeLimitSecs } from './stops.ts';
