import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { AppError, coerceError, DatabaseUnavailableError } from '../shared/errors.ts';
import { authenticate, credentialKey, type Credential } from './pipeline.ts';

/**
 * Access that lasts: what a graphql-ws socket or a subscription over SSE was opened with, checked
 * again before every event it delivers and, while it is idle, on a timer. A key revoked or expired, a
 * session signed out (or all of its user's), a member removed or demoted: the next check sees it
 * through the authenticator, whose cache keeps a verdict at most AUTH_CACHE_SECS, so access ends within
 * that time whether or not the client sends anything. Fields resolved for an event (a signed download
 * link) read the principal as the last check found it, never as it was at connect.
 */

type AccessDeps = Pick<Core, 'auth' | 'config' | 'authFailureLimiter'>;

/**
 * The time within which a change of access reaches open connections: the key cache time, at least a
 * second. They are checked past the cache every half of it (`sweepMs`), so a connection whose access
 * lasts stays confirmed, and its events go out without waiting for a check.
 */
export const recheckMs = (config: Pick<Core['config'], 'authCacheSecs'>) => Math.max(1000, config.authCacheSecs * 1000);
export const sweepMs = (config: Pick<Core['config'], 'authCacheSecs'>) => recheckMs(config) / 2;

/** Checks under way, by authenticator and credential: connections that present one credential share its check. */
const checking = new WeakMap<object, Map<string, Promise<Principal>>>();
function sharedCheck(core: AccessDeps, credential: Credential, options: { fresh?: boolean }): Promise<Principal> {
  let inflight = checking.get(core.auth);
  if (!inflight) {
    inflight = new Map();
    checking.set(core.auth, inflight);
  }
  const key = `${options.fresh ? 'f' : 'c'}${credentialKey(credential)}`;
  let check = inflight.get(key);
  if (!check) {
    check = authenticate(core, credential.authorization, undefined, credential.session, options).finally(() =>
      inflight.delete(key),
    );
    inflight.set(key, check);
  }
  return check;
}

export class LiveAccess {
  /**
   * The caller as the last check found it: one object, updated in
   * place, so every context holding it reads the current role.
   */
  readonly principal: Principal;
  private confirmedAt: number;
  private refusal: AppError | undefined;
  /**
   * The check under way, by kind (through the cache, or past it): a sweep past the cache never takes a cached answer.
   */
  private readonly pending: { cached?: Promise<Principal>; fresh?: Promise<Principal> } = {};
  private listeners: ((refusal: AppError) => void)[] | undefined;
  private holds = 0;
  private timer: NodeJS.Timeout | undefined;

  /**
   * `selfCheck`: while a stream holds this access (`hold`), check it every `recheckMs` on its own
   * timer (an SSE stream). Sockets leave it off: their server checks every open socket from one timer.
   */
  constructor(
    private readonly core: AccessDeps,
    readonly credential: Credential,
    principal: Principal,
    private readonly options: { selfCheck?: boolean } = {},
    now = Date.now(),
  ) {
    this.principal = { ...principal };
    this.confirmedAt = now;
  }

  /** A stream starts following this access; the returned function stops it. */
  hold(): () => void {
    if (this.options.selfCheck && this.holds++ === 0) {
      this.timer = setInterval(
        () => void this.confirm(Date.now(), { fresh: true }).catch(() => {}),
        sweepMs(this.core.config),
      );
      this.timer.unref();
    }
    let released = false;
    return () => {
      if (released || !this.options.selfCheck) return;
      released = true;
      if (--this.holds === 0) clearInterval(this.timer);
    };
  }

  /** Takes `principal` as confirmed now (the pipeline admitted the same credential again). */
  accept(principal: Principal, now = Date.now()): Principal {
    this.replace(principal);
    this.confirmedAt = now;
    return this.principal;
  }

  /** The refusal that ended this access, or undefined while it lasts. */
  get endedBy(): AppError | undefined {
    return this.refusal;
  }

  /**
   * Whether an event may go out without a new check: access was confirmed within the key cache time
   * and has not ended. With no cache (AUTH_CACHE_SECS=0) every event is checked.
   */
  fresh(now = Date.now()): boolean {
    return this.refusal === undefined && now - this.confirmedAt < this.core.config.authCacheSecs * 1000;
  }

  /** Runs `listener` once when access ends (at once if it has). Returns the function that removes it. */
  onEnd(listener: (refusal: AppError) => void): () => void {
    if (this.refusal) {
      listener(this.refusal);
      return () => {};
    }
    this.listeners ??= [];
    this.listeners.push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at >= 0) this.listeners?.splice(at, 1);
    };
  }

  /**
   * Checks the credential again (through the authenticator's cache): the principal as it is now, or
   * the refusal (401 `unauthenticated`, 403 `csrf_failed`), after which access has ended for good.
   * While the database is out of reach nothing can be checked, and nothing changes: the last
   * confirmation stands, so an outage does not end every socket with a code clients do not retry.
   */
  confirm(now = Date.now(), options: { fresh?: boolean } = {}): Promise<Principal> {
    if (this.refusal) return Promise.reject(this.refusal);
    const kind = options.fresh ? 'fresh' : 'cached';
    const pending = this.pending[kind];
    if (pending) return pending;
    const check = this.check(now, options).finally(() => {
      this.pending[kind] = undefined;
    });
    this.pending[kind] = check;
    return check;
  }

  /** Ends access with `refusal` (a check's, or the transport's), running the listeners once. */
  end(refusal: AppError): void {
    if (this.refusal) return;
    this.refusal = refusal;
    clearInterval(this.timer);
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) listener(refusal);
  }

  private async check(now: number, options: { fresh?: boolean }): Promise<Principal> {
    let current: Principal;
    try {
      current = await sharedCheck(this.core, this.credential, options);
    } catch (raised) {
      const err = coerceError(raised);
      if (err instanceof DatabaseUnavailableError) return this.principal;
      if (err instanceof AppError && (err.status === 401 || err.status === 403)) {
        this.end(err);
        throw err;
      }
      throw raised;
    }
    return this.accept(current, now);
  }

  private replace(current: Principal) {
    if (current === this.principal) return;
    // A field the new principal no longer has goes too.
    for (const field of Object.keys(this.principal) as (keyof Principal)[])
      if (!(field in current)) delete this.principal[field];
    Object.assign(this.principal, current);
  }
}

/**
 * The events of `source` while `access` lasts: each is let through only after a check (or within the
 * key cache time of the last one), and the stream stops when access ends, whether it is waiting for
 * an event or not; then it throws the refusal.
 */
export function guardEvents<T>(source: AsyncIterable<T> | AsyncIterator<T>, access: LiveAccess): AsyncGenerator<T> {
  const iterator =
    Symbol.asyncIterator in source
      ? (source as AsyncIterable<T>)[Symbol.asyncIterator]()
      : (source as AsyncIterator<T>);
  return (async function* guarded() {
    const release = access.hold();
    let stop: () => void = () => {};
    const stopped = new Promise<IteratorResult<T>>((resolve) => {
      stop = access.onEnd(() => resolve({ done: true, value: undefined }));
    });
    try {
      for (;;) {
        const next = await Promise.race([iterator.next(), stopped]);
        if (next.done) break;
        if (!access.fresh()) await access.confirm();
        yield next.value;
      }
      if (access.endedBy) throw access.endedBy;
    } finally {
      stop();
      release();
      // A source waiting for its next event finishes its return only after that event: not awaited when access ended.
      const closing = iterator.return?.();
      if (!access.endedBy) await closing;
      else closing?.catch(() => {});
    }
  })();
}
