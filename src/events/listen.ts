/**
 * The bus's listening session: one connection of its own that LISTENs on the channels the process
 * follows and outlives database restarts.
 */
import postgres from 'postgres';
import type { Sql } from '../../db/client.ts';
import { quoteIdentifier } from '../../db/identifiers.ts';
import { DatabaseUnavailableError } from '../shared/errors.ts';

/** The listening session's `application_name`. */
export const LISTENER_NAME = 'leadgate-events';

/**
 * How long a channel nothing follows any more stays listened on, in case it is followed again (an account's dashboard
 * reloading), before one UNLISTEN drops all such channels.
 */
const UNLISTEN_AFTER_MS = 2_000;

/**
 * LISTEN on a connection of its own that outlives database restarts, on fixed channels and on
 * channels added and dropped while it runs (counted: a channel is listened on while anything follows
 * it). LISTENs asked for in one turn of the event loop go as one statement; channels nothing follows
 * are dropped together, a little later.
 *
 * postgres.js's own `listen` listens again once when its connection drops, and gives up for good when
 * the database is still down at that moment; here LISTEN is issued again, for every channel followed,
 * backing off, until it holds, and `onListening` runs each time it does (with when it was lost, after a
 * loss). `ready` settles with the first attempt: a database out of reach at start fails the start.
 */
export function listenAcrossRestarts(
  sql: Sql,
  fixed: readonly string[],
  onNotify: (channel: string, payload: string) => void,
  onListening: (lostAt: Date | undefined) => Promise<void>,
) {
  let stopped = false;
  let dropped: (() => void) | undefined;
  let wake: (() => void) | undefined;
  /** Channels followed, with how many follow each (fixed ones forever). */
  const followed = new Map<string, number>(fixed.map((channel) => [channel, 1]));
  /** Channels listened on in the current session, or being: the LISTEN that covers each. */
  const listened = new Map<string, Promise<void>>();
  /** Whether the current session listens on every channel followed (false while it is being restored). */
  let listening = false;
  let batch: { channels: string[]; done: Promise<void> } | undefined;
  let sweep: NodeJS.Timeout | undefined;

  // A copy of the pool's options, as postgres.js's own listen makes: one connection, never recycled,
  // named so that an operator tells it apart in pg_stat_activity.
  const options = sql.options as unknown as { connection?: Record<string, unknown> };
  const connection = postgres({
    ...options,
    connection: { ...options.connection, application_name: LISTENER_NAME },
    max: 1,
    idle_timeout: null,
    max_lifetime: null,
    fetch_types: false,
    onnotify: (channel: string, payload: string) => {
      if (listened.has(channel)) onNotify(channel, payload);
    },
    onclose: () => dropped?.(),
  } as unknown as postgres.Options<Record<string, never>>);
  const statement = (verb: 'listen' | 'unlisten', channels: readonly string[]) =>
    connection.unsafe(channels.map((c) => `${verb} ${quoteIdentifier(c)}`).join('; ')).simple();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, ms).unref();
    });

  /** LISTEN on `channel` with the others asked for in this turn, in one statement. */
  function listenOn(channel: string): Promise<void> {
    if (!batch) {
      const channels: string[] = [];
      const done = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        batch = undefined;
        await statement('listen', channels);
      });
      batch = { channels, done };
    }
    batch.channels.push(channel);
    const done = batch.done;
    listened.set(channel, done);
    // A failed LISTEN (the session was lost) is for the session's restore to redo; the follower gets the error.
    done.catch(() => {
      if (listened.get(channel) === done) listened.delete(channel);
    });
    return done;
  }

  /** One UNLISTEN for every channel nothing has followed since the last sweep. */
  function sweepUnfollowed() {
    sweep = undefined;
    const idle = [...listened.keys()].filter((channel) => !followed.has(channel));
    if (idle.length === 0 || !listening) return;
    for (const channel of idle) listened.delete(channel);
    // Lost with the session, the channels are not listened on anyway.
    statement('unlisten', idle).catch(() => {});
  }

  let settle!: (err?: unknown) => void;
  const ready = new Promise<void>(
    (resolve, reject) => (settle = (err) => (err === undefined ? resolve() : reject(err))),
  );
  void (async () => {
    let first = true;
    let lostAt: Date | undefined;
    for (let attempt = 0; !stopped; ) {
      const lost = new Promise<void>((resolve) => (dropped = resolve));
      try {
        const channels = [...followed.keys()];
        // With nothing followed yet, the session is still opened: a database out of reach fails the start.
        await (channels.length > 0 ? statement('listen', channels) : connection.unsafe('select 1').simple());
        for (const channel of channels) listened.set(channel, Promise.resolve());
        listening = true;
        await onListening(lostAt);
      } catch (err) {
        listening = false;
        listened.clear();
        if (first) return settle(err);
        lostAt ??= new Date();
        await pause(Math.min(100 * 2 ** attempt++, 2_000));
        continue;
      }
      if (first) settle();
      first = false;
      attempt = 0;
      await lost;
      listening = false;
      listened.clear();
      lostAt = new Date();
    }
  })();

  return {
    ready,
    /** Follows `channel`: resolves once it is listened on; the returned function stops following it. */
    async follow(channel: string): Promise<() => void> {
      if (!listening) throw new DatabaseUnavailableError(2);
      followed.set(channel, (followed.get(channel) ?? 0) + 1);
      let followedNow = true;
      const unfollow = () => {
        if (!followedNow) return;
        followedNow = false;
        const count = (followed.get(channel) ?? 1) - 1;
        if (count > 0) return void followed.set(channel, count);
        followed.delete(channel);
        sweep ??= setTimeout(sweepUnfollowed, UNLISTEN_AFTER_MS).unref();
      };
      try {
        await (listened.get(channel) ?? listenOn(channel));
      } catch (err) {
        unfollow();
        throw err;
      }
      return unfollow;
    },
    async close() {
      stopped = true;
      if (sweep) clearTimeout(sweep);
      wake?.();
      await connection.end({ timeout: 1 });
    },
  };
}
