/** Clients drop a tool call after about 60 seconds, so a call waits for a run at most this long. */
export const MAX_WAIT_SECS = 45;
/** Rows per download_results call, and the most bytes of JSON they may take, so an agent's context is never flooded. */
export const MAX_PAGE_ROWS = 100;
export const MAX_PAGE_BYTES = 50 * 1024;
/** Rows a start that waited for its run answers with. */
export const FIRST_PAGE_ROWS = 20;
