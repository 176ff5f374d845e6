import pino from 'pino';

export type Logger = pino.Logger;

/** Where log lines go: anything with `write(line)` (pino's own destinations, a test's capture). */
export interface LogDestination {
  write(line: string): unknown;
}

/**
 * Application logger. Secrets never reach a log line, in three layers:
 * - `redact` paths blank the fields that hold them by name (Authorization headers, keys, passwords,
 *   secrets, tokens, email fields, a graphile-worker job's `last_error`);
 * - errors are serialized from an allow-list of fields: a failed query's bind parameters (drizzle's
 *   `params`, postgres.js's `parameters`) are never copied, and drizzle's "params: …" line is cut from
 *   the message and the stack, also where another library formatted the error into the message;
 * - every line is scrubbed as it is written: API keys (`lg_live_…`), webhook signing secrets
 *   (`whsec_…`), payment keys (`sk_live_…`), Bearer tokens and email addresses (the part before the @)
 *   are replaced wherever they appear, in messages, nested objects or stacks.
 * docs/operations.md describes it.
 */
export function createLogger(
  level: string,
  destination: LogDestination = pino.destination({ dest: 1, sync: false }),
): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError, error: serializeError, job: serializeJob },
      formatters: {
        // A graphile-worker job's log names its run or delivery at the top level, like the engine's own logs.
        log: (object) => {
          const ids = jobIds(object.job);
          return ids ? { ...ids, ...object } : object;
        },
      },
      hooks: {
        logMethod(args, method) {
          return method.apply(this, cleanArgs(args) as Parameters<typeof method>);
        },
      },
    },
    scrubbing(destination),
  );
}

const REDACT_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  'connectionParams.authorization',
  'connectionParams.Authorization',
  '*.connectionParams.authorization',
  '*.connectionParams.Authorization',
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  'password',
  '*.password',
  '*.*.password',
  'secret',
  '*.secret',
  'webhookSecret',
  '*.webhookSecret',
  'webhook_secret',
  '*.webhook_secret',
  'token',
  '*.token',
  'email',
  '*.email',
  'emails',
  '*.emails',
  'parameters',
  '*.parameters',
  'job.last_error',
];

// ---------------------------------------------------------------------------------------------
// Scrubbing every line

/** Not right after an escaping backslash: a match never starts on the letter of a JSON escape (`\n`, `\u…`). */
const NOT_ESCAPED = String.raw`(?<!(?<!\\)(?:\\\\)*\\)(?<!\\u[0-9A-Fa-f]{0,3})`;
const pattern = (source: string, flags = 'g') => new RegExp(NOT_ESCAPED + source, flags);

/** Secrets recognisable by their shape, as they appear in a JSON log line, and what replaces them. */
const SECRET_PATTERNS: [RegExp, string][] = [
  [pattern('lg_(?:live|test)_[A-Za-z0-9]+'), 'lg_live_[redacted]'],
  [pattern('whsec_[A-Za-z0-9+/=]+'), 'whsec_[redacted]'],
  [pattern('(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]+'), '[redacted-key]'],
  [pattern(String.raw`(Bearer|Basic)\s+(?!\[redacted)[^\s"',;\\]+`, 'gi'), '$1 [redacted]'],
  // An email address keeps its domain (which mail server, which company), never its mailbox.
  [pattern(String.raw`[A-Za-z0-9._%+-]+@(?=[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})`), '***@'],
];

/** `text` with every secret of a recognisable shape replaced. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

function scrubbing(destination: LogDestination): LogDestination {
  const inner = destination as LogDestination & {
    flush?(cb?: (err?: Error) => void): void;
    flushSync?(): void;
    end?(): void;
  };
  return {
    write: (line: string) => inner.write(scrubSecrets(line)),
    ...(inner.flush ? { flush: (cb?: (err?: Error) => void) => inner.flush?.(cb) } : {}),
    ...(inner.flushSync ? { flushSync: () => inner.flushSync?.() } : {}),
    ...(inner.end ? { end: () => inner.end?.() } : {}),
  } as LogDestination;
}

// ---------------------------------------------------------------------------------------------
// Errors

type ErrorLike = Error & Record<string, unknown>;

const isErrorLike = (value: unknown): value is ErrorLike =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Error).message === 'string' &&
  (value instanceof Error || typeof (value as Error).stack === 'string');

/** The error and the errors it wraps (cause, GraphQL's originalError, an AggregateError's errors), nearest first. */
function errorChain(err: ErrorLike): ErrorLike[] {
  const chain: ErrorLike[] = [];
  const queue: unknown[] = [err];
  while (queue.length > 0 && chain.length < 8) {
    const next = queue.shift();
    if (!isErrorLike(next) || chain.includes(next)) continue;
    chain.push(next);
    queue.push(next.cause, next.originalError, ...(Array.isArray(next.errors) ? next.errors : []));
  }
  return chain;
}

/** Postgres error classes whose message quotes the value that failed (22: data exception). */
const VALUE_IN_MESSAGE = /^22/;

/** A Postgres DETAIL without the values it quotes: `Key (email)=(…)`, `Failing row contains (…)`, `Token "…"`. */
function detailWithoutValues(detail: string): string {
  return detail
    .replace(/\)=\(.*\)/s, ')=([redacted])')
    .replace(/contains \(.*\)/s, 'contains ([redacted])')
    .replace(/"[^"]*"/g, '"[redacted]"');
}

const isPostgresError = (e: ErrorLike) =>
  e.name === 'PostgresError' || (typeof e.severity === 'string' && typeof e.code === 'string' && 'routine' in e);

/**
 * `text` (a message, a stack, or a line a library formatted from the error) without the bind values
 * `err` and the errors it wraps carry: drizzle's "params: …" line, a Postgres DETAIL's values, and
 * the value a data exception quotes in its message.
 */
export function withoutQueryValues(text: string, err: unknown): string {
  if (!isErrorLike(err)) return text;
  let out = text;
  for (const e of errorChain(err)) {
    if (Array.isArray(e.params)) {
      const line = `params: ${String(e.params)}`;
      if (line !== 'params: ') out = out.split(line).join('params: [redacted]');
    }
    if (isPostgresError(e)) {
      if (typeof e.detail === 'string' && e.detail) out = out.split(e.detail).join(detailWithoutValues(e.detail));
      if (typeof e.code === 'string' && VALUE_IN_MESSAGE.test(e.code) && e.message) {
        out = out
          .split(e.message)
          .join(e.message.replace(/"[^"]*"/g, '"[redacted]"').replace(/: [^"].*$/s, ': [redacted]'));
      }
    }
  }
  return out;
}

/** Fields of an error that say what failed without carrying the data it failed on. */
const SAFE_FIELDS = [
  'code',
  'errno',
  'syscall',
  'address',
  'port',
  'status',
  'statusCode',
  'severity',
  'routine',
  'schema_name',
  'table_name',
  'column_name',
  'data_type_name',
  'constraint_name',
  'position',
];

/**
 * An error as logged: type, message, stack, the safe fields and what it wraps, each without the
 * query values it carries. Everything else an error object holds (drizzle's `params`, postgres.js's
 * `parameters` and `args`, a Postgres `where` or `internal_query`) is left out.
 */
export function serializeError(value: unknown, depth = 0): unknown {
  if (!isErrorLike(value)) return value;
  const root = value;
  const clean = (text: unknown) => (typeof text === 'string' ? withoutQueryValues(text, root) : undefined);
  const out: Record<string, unknown> = {
    type: value.constructor?.name && value.constructor.name !== 'Object' ? value.constructor.name : value.name,
    message: clean(value.message),
    stack: clean(value.stack),
  };
  for (const field of SAFE_FIELDS) {
    const v = value[field];
    if (typeof v === 'string' || typeof v === 'number') out[field] = v;
  }
  if (typeof value.detail === 'string') out.detail = clean(detailWithoutValues(value.detail));
  // drizzle's failed query: its SQL (placeholders only, never the values).
  if (typeof value.query === 'string' && Array.isArray(value.params)) out.query = value.query;
  if (depth < 4) {
    const cause = value.cause ?? value.originalError;
    if (isErrorLike(cause)) out.cause = serializeError(cause, depth + 1);
    if (Array.isArray(value.errors)) out.errors = value.errors.slice(0, 10).map((e) => serializeError(e, depth + 1));
  }
  return out;
}

/** The errors a log call carries: its first argument, or the `err` / `error` field of it. */
function errorsOf(first: unknown): ErrorLike[] {
  if (isErrorLike(first)) return [first];
  if (typeof first !== 'object' || first === null) return [];
  const { err, error } = first as { err?: unknown; error?: unknown };
  return [err, error].filter(isErrorLike);
}

/**
 * The arguments of a log call with the message freed of the query values of the errors it carries
 * (graphile-worker and graphql-yoga write an error's message and stack into the line's message).
 */
function cleanArgs(args: unknown[]): unknown[] {
  const errors = errorsOf(args[0]);
  if (errors.length === 0) return args;
  const clean = (text: string) => errors.reduce((t, e) => withoutQueryValues(t, e), text);
  if (typeof args[1] === 'string') return [args[0], clean(args[1]), ...args.slice(2)];
  // pino logs an error given alone with its message as the line's message.
  if (args.length === 1 && isErrorLike(args[0])) return [args[0], clean(args[0].message)];
  return args;
}

// ---------------------------------------------------------------------------------------------
// graphile-worker jobs

interface JobLike {
  id?: unknown;
  task_identifier?: unknown;
  attempts?: unknown;
  max_attempts?: unknown;
  payload?: unknown;
}

/** The ids a job's payload names (src/workers/jobs.ts): its run or its webhook delivery. */
function jobIds(job: unknown): { runId?: string; deliveryId?: string } | undefined {
  if (typeof job !== 'object' || job === null) return undefined;
  const payload = (job as JobLike).payload as { runId?: unknown; deliveryId?: unknown } | null | undefined;
  if (typeof payload !== 'object' || payload === null) return undefined;
  const ids: { runId?: string; deliveryId?: string } = {};
  if (typeof payload.runId === 'string') ids.runId = payload.runId;
  if (typeof payload.deliveryId === 'string') ids.deliveryId = payload.deliveryId;
  return ids.runId || ids.deliveryId ? ids : undefined;
}

/** A graphile-worker job as logged: which job and attempt, not its payload or its last error. */
function serializeJob(job: unknown): unknown {
  if (typeof job !== 'object' || job === null) return job;
  const j = job as JobLike;
  return { id: j.id, task: j.task_identifier, attempts: j.attempts, maxAttempts: j.max_attempts, ...jobIds(job) };
}

// ---------------------------------------------------------------------------------------------
// Request loggers

/** The logger methods Fastify asks of a request's logger. */
type LevelMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger: logs with the request id (`reqId`), but makes the child logger only when the
 * request logs something. Most requests log nothing, and a pino child per request is a measurable
 * cost on the hottest path (status polling).
 */
export class RequestLogger {
  #child: Logger | undefined;
  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
  ) {}
  get level() {
    return this.parent.level;
  }
  set level(level: string) {
    this.logger().level = level;
  }
  private logger(): Logger {
    this.#child ??= this.parent.child(this.bindings);
    return this.#child;
  }
  child(bindings: Record<string, unknown>, options?: pino.ChildLoggerOptions) {
    return this.logger().child(bindings, options);
  }
  isLevelEnabled(level: string) {
    return this.parent.isLevelEnabled(level);
  }
  silent() {}
  fatal(...args: unknown[]) {
    this.write('fatal', args);
  }
  error(...args: unknown[]) {
    this.write('error', args);
  }
  warn(...args: unknown[]) {
    this.write('warn', args);
  }
  info(...args: unknown[]) {
    this.write('info', args);
  }
  debug(...args: unknown[]) {
    this.write('debug', args);
  }
  trace(...args: unknown[]) {
    this.write('trace', args);
  }
  private write(level: LevelMethod, args: unknown[]) {
    if (!this.parent.isLevelEnabled(level)) return;
    (this.logger()[level] as (...a: unknown[]) => void)(...args);
  }
}
