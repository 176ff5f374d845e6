import { setMaxListeners } from 'node:events';

/**
 * A signal that aborts with `parent` and may have any number of listeners: one run holds many
 * connections at once, each listening for the run's end, while the run's own signal gets one listener.
 */
export function fanOutSignal(parent?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', () => controller.abort(parent.reason), { once: true });
  return controller.signal;
}
