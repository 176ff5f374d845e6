/**
 * Worker liveness: each worker's heartbeat, and the sweep that hands back the jobs of workers that
 * stopped beating.
 */
import type { Sql } from '../../db/client.ts';
import type { Logger } from '../logger.ts';
import { isDatabaseUnavailable } from '../shared/errors.ts';

export interface Liveness {
  /** Registers a graphile-worker id of this process; resolves once its first beat is stored. */
  add(workerId: string): Promise<void>;
  /** Stops beating and forgets this process's workers (their jobs are finished or handed back). */
  stop(): Promise<void>;
  /** When a heartbeat of this process last reached the database (ms since the epoch), if one has. */
  lastBeatAt(): number | undefined;
}

/**
 * Heartbeats for this process's workers, and the sweep that hands back the jobs of workers that
 * stopped beating (a process killed mid-run): their locks are cleared, so any live worker takes
 * the job again and the run resumes where its stored rows end. Each process sweeps; the sweep is
 * one statement, safe to run from many processes at once. It reads and changes graphile-worker's
 * state only through its public API: the `graphile_worker.jobs` view and `force_unlock_workers`.
 */
export function startLiveness(
  sql: Sql,
  logger: Logger,
  livenessSecs: number,
  onPeers?: (ids: string[]) => void,
): Liveness {
  const ids = new Set<string>();
  const beatMs = Math.max(200, (livenessSecs * 1000) / 4);
  let lastBeatAt: number | undefined;

  const beat = async () => {
    if (ids.size === 0) return;
    const at = Date.now();
    // The beat reads the live workers of every process too (job-routing.ts ranks them).
    const live = await sql<{ worker_id: string }[]>`
      with beat as (
        insert into worker_heartbeat (worker_id, heartbeat_at)
        select unnest(${sql.array([...ids])}::text[]), now()
        on conflict (worker_id) do update set heartbeat_at = excluded.heartbeat_at
        returning worker_id
      )
      select worker_id from worker_heartbeat where heartbeat_at > now() - make_interval(secs => ${livenessSecs})
      union
      select worker_id from beat`;
    lastBeatAt = Math.max(lastBeatAt ?? 0, at);
    onPeers?.(live.map((row) => row.worker_id));
  };

  const sweep = async () => {
    const rows = await sql<{ dead: number }[]>`
      with dead as (
        select distinct j.locked_by as worker_id
        from graphile_worker.jobs j
        where j.locked_by is not null
          and j.locked_at < now() - make_interval(secs => ${livenessSecs})
          and not exists (
            select 1 from worker_heartbeat h
            where h.worker_id = j.locked_by and h.heartbeat_at > now() - make_interval(secs => ${livenessSecs})
          )
      ), unlocked as (
        select graphile_worker.force_unlock_workers(array(select worker_id from dead))
      )
      select (select count(*)::int from dead) as dead, (select count(*) from unlocked) as done`;
    const dead = rows[0]?.dead ?? 0;
    if (dead > 0) logger.warn({ workers: dead }, 'handed back the jobs of workers that stopped responding');
    await sql`delete from worker_heartbeat where heartbeat_at < now() - interval '1 day'`;
  };

  // After the database was away every worker's last beat is old, live or not: sweep again only once
  // each live worker has had a whole liveness period to beat, or the jobs of live workers would be
  // handed out a second time.
  let away = false;
  let sweepFrom = 0;
  const sweepWhenDue = () => {
    if (away) {
      away = false;
      sweepFrom = Date.now() + livenessSecs * 1000;
      logger.info('database back: heartbeats resumed');
    }
    return Date.now() >= sweepFrom ? sweep() : undefined;
  };

  // One tick at a time: while the database is slow or away, ticks do not pile up on the pool.
  let ticking = false;
  const tick = () => {
    if (ticking) return;
    ticking = true;
    beat()
      .then(sweepWhenDue)
      .catch((err: unknown) => {
        // An outage is logged once, not at every beat.
        if (!away || !isDatabaseUnavailable(err)) logger.warn({ err }, 'worker heartbeat failed');
        away = true;
      })
      .finally(() => (ticking = false));
  };
  const timer = setInterval(tick, beatMs);
  timer.unref();
  // The first sweep at once: a worker coming back resumes the runs of the process it replaces.
  setImmediate(tick);

  return {
    async add(workerId) {
      ids.add(workerId);
      await beat().catch(() => {});
    },
    async stop() {
      clearInterval(timer);
      if (ids.size > 0) await sql`delete from worker_heartbeat where worker_id = any(${sql.array([...ids])}::text[])`;
      ids.clear();
    },
    lastBeatAt: () => lastBeatAt,
  };
}
