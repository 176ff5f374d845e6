import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapsTool } from '../../src/tools/maps.ts';
import { fireDueSchedules, nextTick } from '../../src/workflows/schedules.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { collect, disposeClients, wsClient } from '../helpers/ws.ts';
import { chargedMicros } from '../helpers/runs.ts';

/**
 * Saved tasks and schedules, the clock driven: `fireDueSchedules(core, now)` is what the worker pool's
 * minute job calls, with the tick's time given here instead of waited for.
 */

const UNIT = mapsTool.price.unitMicros;
/** Every dentist in Denver the catalog has, and one more after the first fire. */
const TASK_INPUT = { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 500 };

let t: TestApp;
let key: string;
let accountId: string;

beforeAll(async () => ({ t, key, accountId } = await appWithAccount({ account: { creditsMicros: 50_000_000n } })));
afterAll(async () => {
  disposeClients();
  await t?.stop();
});

const core = () => t.app.core;
const fire = (now: Date) => fireDueSchedules(core(), now);
const scheduleRow = async (id: string) =>
  (await t.request('GET', `/api/v1/schedules/${id}`, { key })).body as {
    schedule: Record<string, unknown>;
    fires: { tick: string; outcome: string; reason: string | null; runId: string | null }[];
  };

async function saveTask(name: string, body: Record<string, unknown> = {}) {
  const saved = await t.request('POST', '/api/v1/tasks', {
    key,
    body: { name, tool: 'maps', input: TASK_INPUT, ...body },
  });
  expect(saved.status, saved.text).toBe(201);
  return saved.body.task as { id: string };
}

async function schedule(task: string, cron = '0 9 * * 1', timezone = 'America/Denver', extra = {}) {
  const made = await t.request('POST', '/api/v1/schedules', { key, body: { task, cron, timezone, ...extra } });
  expect(made.status, made.text).toBe(201);
  return made.body.schedule as { id: string; nextFireAt: string };
}

describe('saved tasks', () => {
  it('saves a tool’s input under a name, refusing one a start would refuse, and starts it with overrides', async () => {
    const bad = await t.request('POST', '/api/v1/tasks', {
      key,
      body: { name: 'bad', tool: 'maps', input: { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: -1 } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([expect.objectContaining({ path: 'input.maxCrawledPlacesPerSearch' })]);
    const task = await saveTask('by-hand');
    expect(
      (await t.request('POST', '/api/v1/tasks', { key, body: { name: 'by-hand', tool: 'maps', input: TASK_INPUT } }))
        .body.error.code,
    ).toBe('task_exists');
    const started = await t.request('POST', `/api/v1/tasks/by-hand/runs`, {
      key,
      body: { input: { maxCrawledPlacesPerSearch: 2 } },
    });
    expect(started.status, started.text).toBe(200);
    const end = await t.waitForRun(key, started.body.runId);
    expect(end).toMatchObject({ status: 'SUCCEEDED', billed_units: 2 });
    const [row] = await t.app.core.sql`select task_id, input from run where id = ${started.body.runId}`;
    expect(row).toMatchObject({ task_id: task.id, input: { ...TASK_INPUT, maxCrawledPlacesPerSearch: 2 } });
  });
});

describe('schedules', () => {
  it('two ticks of a task into one dataset with onlyNew: the second delivers and bills only the new place', async () => {
    const task = await saveTask('weekly-dentists', { datasetName: 'weekly-dentists', onlyNew: true });
    const made = await schedule(task.id);
    const tick1 = new Date(made.nextFireAt);
    // Monday 09:00 in Denver.
    expect(tick1.getUTCDay()).toBe(1);
    expect([15, 16]).toContain(tick1.getUTCHours());

    const [first] = await fire(tick1);
    expect(first).toMatchObject({ scheduleId: made.id, outcome: 'started' });
    const firstEnd = await t.waitForRun(key, first!.runId!);
    const known = firstEnd.billed_units as number;
    expect(known).toBeGreaterThan(0);

    // A new dentist opens in Denver.
    await t.app.core.sql`
      insert into local_business (place_id, name, category, street, city, state, postal_code, lat, lng)
      values ('ChIJnewDentistDenver01', 'Brand New Dental', 'Dentist', '1 New St', 'Denver', 'CO', '80202', 39.74, -104.99)`;
    const tick2 = new Date((await scheduleRow(made.id)).schedule.nextFireAt as string);
    expect(tick2.getTime() - tick1.getTime()).toBe(7 * 86_400_000);
    const [second] = await fire(tick2);
    const secondEnd = await t.waitForRun(key, second!.runId!);
    expect(secondEnd).toMatchObject({ status: 'SUCCEEDED', billed_units: 1, skippedDelivered: known });
    expect(await chargedMicros(t.app.core.sql, second!.runId!)).toBe(UNIT);
    const rows = await t.request('GET', `/api/downloads/${second!.runId}?format=json`, { key });
    expect(rows.body.map((r: { place_id: string }) => r.place_id)).toEqual(['ChIJnewDentistDenver01']);
    const [tagged] = await t.app.core.sql`select schedule_id, task_id from run where id = ${String(second?.runId)}`;
    expect(tagged).toEqual({ schedule_id: made.id, task_id: task.id });
  });

  it('fires a tick once however many workers look at the same moment', async () => {
    const task = await saveTask('once');
    const made = await schedule(task.id, '30 7 * * *', 'UTC');
    const tick = new Date(made.nextFireAt);
    const results = (await Promise.all(Array.from({ length: 6 }, () => fire(tick)))).flat();
    expect(results.filter((r) => r.scheduleId === made.id)).toHaveLength(1);
    const [{ n }] = (await t.app.core
      .sql`select count(*)::int as n from run where schedule_id = ${made.id}`) as unknown as [{ n: number }];
    expect(n).toBe(1);
    // Asked again at the same moment, nothing more fires.
    expect((await fire(tick)).filter((r) => r.scheduleId === made.id)).toEqual([]);
  });

  it('a tick claimed by a worker that died before moving the schedule on does not leave it stuck', async () => {
    const task = await saveTask('orphan-tick');
    const made = await schedule(task.id, '45 5 * * *', 'UTC');
    const tick = new Date(made.nextFireAt);
    // The dead worker's claim: the tick's row, and nothing after it.
    await t.app.core
      .sql`insert into schedule_fire (schedule_id, tick) values (${made.id}, ${made.nextFireAt}::timestamptz)`;
    expect((await fire(tick)).filter((r) => r.scheduleId === made.id)).toEqual([]);
    const after = await scheduleRow(made.id);
    expect(new Date(after.schedule.nextFireAt as string).getTime()).toBe(tick.getTime() + 86_400_000);
  });

  it('after downtime fires once for the ticks it missed, then goes on from the next to come', async () => {
    const task = await saveTask('catch-up');
    const made = await schedule(task.id, '0 * * * *', 'UTC');
    const late = new Date(new Date(made.nextFireAt).getTime() + 5 * 3_600_000 + 60_000);
    const fired = (await fire(late)).filter((r) => r.scheduleId === made.id);
    expect(fired).toHaveLength(1);
    const after = await scheduleRow(made.id);
    expect(new Date(after.schedule.nextFireAt as string).getTime()).toBeGreaterThan(late.getTime());
    expect((await fire(late)).filter((r) => r.scheduleId === made.id)).toEqual([]);
  });

  it('an exclusive schedule skips a tick while the run before is still going, saying why', async () => {
    const task = await saveTask('exclusive');
    const made = await schedule(task.id, '15 6 * * *', 'UTC');
    const tick1 = new Date(made.nextFireAt);
    const [first] = (await fire(tick1)).filter((r) => r.scheduleId === made.id);
    // The run is held RUNNING: its row says so, as a run in flight would.
    await t.waitForRun(key, first!.runId!);
    await t.app.core.sql`update run set status = 'RUNNING' where id = ${String(first?.runId)}`;
    const tick2 = new Date(tick1.getTime() + 86_400_000);
    const [second] = (await fire(tick2)).filter((r) => r.scheduleId === made.id);
    expect(second).toMatchObject({
      outcome: 'skipped',
      reason: `The run of the tick before (${first!.runId}) is still RUNNING.`,
    });
    expect((await scheduleRow(made.id)).fires[0]).toMatchObject({ outcome: 'skipped', runId: null });
    await t.app.core.sql`update run set status = 'SUCCEEDED' where id = ${String(first?.runId)}`;
  });

  it('a schedule whose account cannot pay pauses itself with the reason and tells the webhooks', async () => {
    const poor = await t.account({ creditsMicros: 0n });
    const hook = await t.request('POST', '/api/v1/webhooks', {
      key: poor.apiKey,
      body: { url: 'https://hooks.example.invalid/leadgate', events: ['schedule.paused'] },
    });
    expect(hook.status).toBe(201);
    const saved = await t.request('POST', '/api/v1/tasks', {
      key: poor.apiKey,
      body: { name: 'unpaid', tool: 'maps', input: TASK_INPUT },
    });
    expect(saved.status, saved.text).toBe(201);
    const made = await t.request('POST', '/api/v1/schedules', {
      key: poor.apiKey,
      body: { task: 'unpaid', cron: '0 8 * * *' },
    });
    const tick = new Date(made.body.schedule.nextFireAt);
    // A subscriber of the account's schedule events hears it too, after the schedules paused already.
    const other = await t.request('POST', '/api/v1/schedules', {
      key: poor.apiKey,
      body: { task: 'unpaid', cron: '0 3 1 1 *' },
    });
    await t.request('POST', `/api/v1/schedules/${other.body.schedule.id}/pause`, { key: poor.apiKey });
    const events = collect<{ kind: string; reason: string; schedule: { id: string; paused: boolean } }>(
      wsClient(t.url, poor.apiKey),
      'subscription { scheduleEvents { kind reason schedule { id paused } } }',
      {},
      'scheduleEvents',
      (items) => items.length === 2,
    );
    expect(await events.first).toEqual({
      kind: 'PAUSED',
      reason: 'Paused by hand.',
      schedule: { id: other.body.schedule.id, paused: true },
    });
    const [paused] = (await fire(tick)).filter((r) => r.scheduleId === made.body.schedule.id);
    expect(paused).toMatchObject({
      outcome: 'paused',
      reason: 'The wallet cannot pay for the run: buy credits, then resume the schedule.',
    });
    const view = await t.request('GET', `/api/v1/schedules/${made.body.schedule.id}`, { key: poor.apiKey });
    expect(view.body.schedule).toMatchObject({ paused: true, nextFireAt: null, pausedReason: paused!.reason });
    const [delivery] = await t.app.core.sql`
      select event, payload from webhook_delivery where account_id = ${poor.accountId}`;
    expect(delivery).toMatchObject({
      event: 'schedule.paused',
      payload: { type: 'schedule.paused', data: { scheduleId: made.body.schedule.id, reason: paused!.reason } },
    });
    const [, heard] = await events.done;
    expect(heard).toEqual({
      kind: 'PAUSED',
      reason: paused!.reason,
      schedule: { id: made.body.schedule.id, paused: true },
    });
    // A paused schedule does not fire; resumed, it goes on from the next tick to come.
    expect(
      (await fire(new Date(tick.getTime() + 86_400_000))).filter((r) => r.scheduleId === made.body.schedule.id),
    ).toEqual([]);
    const resumed = await t.request('POST', `/api/v1/schedules/${made.body.schedule.id}/resume`, { key: poor.apiKey });
    expect(resumed.body.schedule).toMatchObject({ paused: false, pausedReason: null });
  });

  it('reads its expression in its time zone, daylight saving included, and refuses what is not one', () => {
    const denver = { cron: '0 9 * * *', timezone: 'America/Denver' };
    // Before and after the change to daylight saving time on 8 March 2026.
    expect(nextTick(denver, new Date('2026-03-07T12:00:00Z'))?.toISOString()).toBe('2026-03-07T16:00:00.000Z');
    expect(nextTick(denver, new Date('2026-03-09T12:00:00Z'))?.toISOString()).toBe('2026-03-09T15:00:00.000Z');
    expect(accountId).toBeTruthy();
  });

  it('refuses a cron expression or a time zone that is not one, naming the field', async () => {
    await saveTask('refusals');
    const badCron = await t.request('POST', '/api/v1/schedules', { key, body: { task: 'refusals', cron: '* * *' } });
    expect(badCron.status).toBe(400);
    expect(badCron.body.error.details[0]).toMatchObject({
      path: 'cron',
      message: expect.stringMatching(/^must have five fields/),
    });
    const badZone = await t.request('POST', '/api/v1/schedules', {
      key,
      body: { task: 'refusals', cron: '0 9 * * 1', timezone: 'Mars/Olympus' },
    });
    expect(badZone.body.error.details[0]).toMatchObject({ path: 'timezone' });
    const noTask = await t.request('POST', '/api/v1/schedules', { key, body: { task: 'nope', cron: '0 9 * * 1' } });
    expect(noTask.status).toBe(404);
    expect(noTask.body.error.code).toBe('task_not_found');
  });
});

describe('on GraphQL', () => {
  it('saves a task, schedules it, pauses it and reads its ticks', async () => {
    const saved = await t.graphql(
      key,
      `mutation ($input: CreateTaskInput!) { createTask(input: $input) { task { id name tool } userErrors { code field message } } }`,
      { input: { name: 'gql-task', tool: 'MAPS', input: TASK_INPUT } },
    );
    expect(saved.body.data.createTask).toMatchObject({ task: { name: 'gql-task', tool: 'MAPS' }, userErrors: [] });
    const scheduled = await t.graphql(
      key,
      `mutation { createSchedule(task: "gql-task", cron: "0 9 * * 1", timezone: "America/Denver") {
        schedule { id cron timezone paused nextFireAt task { name } } userErrors { code message } } }`,
    );
    const made = scheduled.body.data.createSchedule.schedule;
    expect(made).toMatchObject({ cron: '0 9 * * 1', paused: false, task: { name: 'gql-task' } });
    const paused = await t.graphql(
      key,
      `mutation { pauseSchedule(schedule: "gql-task") { schedule { paused nextFireAt } } }`,
    );
    expect(paused.body.data.pauseSchedule.schedule).toEqual({ paused: true, nextFireAt: null });
    const listed = await t.graphql(
      key,
      '{ schedules(first: 50) { totalCount nodes { id fires { nodes { outcome } } } } }',
    );
    expect(listed.body.data.schedules.nodes.map((s: { id: string }) => s.id)).toContain(made.id);
    const linked = await t.graphql(
      key,
      `mutation { createTask(input: { name: "x", tool: PROPERTY_OWNER_CONTACT, input: {} }) {
        task { id } userErrors { code field message } } }`,
    );
    expect(linked.body.data.createTask).toEqual({
      task: null,
      userErrors: [
        {
          code: 'VALIDATION_FAILED',
          field: ['input', 'tool'],
          message: "Property owner contact starts only with another tool's run: it cannot be saved as a task.",
        },
      ],
    });
    const bad = await t.graphql(
      key,
      'mutation { createSchedule(task: "gql-task", cron: "nope") { schedule { id } userErrors { code field } } }',
    );
    expect(bad.body.data.createSchedule).toEqual({
      schedule: null,
      userErrors: [{ code: 'VALIDATION_FAILED', field: ['cron'] }],
    });
  });
});
