import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOWNLOAD_AUDIT_ROWS } from '../../src/audit/actions.ts';
import { destinations } from '../../src/config/destinations.ts';
import { markBroken } from '../../src/destinations/connections.ts';
import { getInstallationSecret } from '../../src/accounts/installation.ts';
import { signDownload, signedDownloadPath } from '../../src/runs/download-links.ts';
import { getRun } from '../../src/runs/read.ts';
import { snapshotOf } from '../../src/runs/view.ts';
import { fireDueSchedules } from '../../src/workflows/schedules.ts';
import { person, writeRun } from '../helpers/deliveries.ts';
import { type FakeSlack, startFakeSlack } from '../helpers/fakes/slack.ts';
import { graphql } from '../helpers/gql/index.ts';
import type { Role } from '../helpers/gql/graphql.ts';
import { type Browser, type IdentityApp, startIdentityApp } from '../helpers/identity.ts';

/**
 * Every audited action leaves exactly one event, in its own transaction, naming the right account, actor
 * (the console user, the API key, leadgate itself, or the user a signed link was made for) and target,
 * with its details, the client's address and User-Agent where a request made it; a download or export
 * of DOWNLOAD_AUDIT_ROWS rows or fewer leaves none.
 */

const Viewer = graphql(`query AuditEventsViewer { viewer { id } currentUser { id email } }`);
const CreateKey = graphql(`
  mutation AuditEventsCreateKey($name: String!) { createApiKey(input: {name: $name}) { secret apiKey { id prefix } userErrors { code } } }
`);
const RevokeKey = graphql(
  `mutation AuditEventsRevokeKey($id: ID!) { revokeApiKey(id: $id) { apiKey { id } userErrors { code } } }`,
);
const Invite = graphql(`
  mutation AuditEventsInvite($input: InviteMemberInput!) { inviteMember(input: $input) { invitation { id } userErrors { code message } } }
`);
const RevokeInvitation = graphql(
  `mutation AuditEventsRevokeInvitation($id: ID!) { revokeInvitation(id: $id) { revokedInvitationId userErrors { code } } }`,
);
const Members = graphql(`query AuditEventsMembers { viewer { members { nodes { id user { id email } } } } }`);
const ChangeRole = graphql(`
  mutation AuditEventsChangeRole($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { membership { role } userErrors { code } } }
`);
const RemoveMember = graphql(
  `mutation AuditEventsRemoveMember($id: ID!) { removeMember(id: $id) { removedMembershipId userErrors { code } } }`,
);
const Sessions = graphql(`query AuditEventsSessions { sessions(first: 100) { nodes { id current } } }`);
const RevokeSession = graphql(
  `mutation AuditEventsRevokeSession($id: ID!) { revokeSession(id: $id) { revokedSessionId userErrors { code } } }`,
);
const SignOutEverywhere = graphql(
  `mutation AuditEventsSignOutEverywhere { signOutEverywhere { revokedSessionCount userErrors { code } } }`,
);
const Connect = graphql(`
  mutation AuditEventsConnect($input: ConnectProviderWithTokenInput!) { connectProviderWithToken(input: $input) { connection { id } userErrors { code message } } }
`);
const Disconnect = graphql(
  `mutation AuditEventsDisconnect($id: ID!) { disconnectProvider(id: $id) { disconnectedConnectionId userErrors { code } } }`,
);
const CreateTask = graphql(
  `mutation AuditEventsCreateTask($input: CreateTaskInput!) { createTask(input: $input) { task { id } userErrors { code message } } }`,
);
const CreateSchedule = graphql(`
  mutation AuditEventsCreateSchedule($task: String!) { createSchedule(task: $task, cron: "0 9 * * 1", timezone: "America/Denver") { schedule { id } userErrors { code message } } }
`);
const PauseSchedule = graphql(
  `mutation AuditEventsPause($schedule: String!) { pauseSchedule(schedule: $schedule) { schedule { paused } userErrors { code } } }`,
);
const ResumeSchedule = graphql(
  `mutation AuditEventsResume($schedule: String!) { resumeSchedule(schedule: $schedule) { schedule { paused } userErrors { code } } }`,
);
const DeleteSchedule = graphql(
  `mutation AuditEventsDelete($schedule: String!) { deleteSchedule(schedule: $schedule) { deletedId userErrors { code } } }`,
);

const PASSWORD = 'correct horse battery';
const AGENT = 'audit-test/1.0';

let t: IdentityApp;
let slack: FakeSlack;
let owner: Browser;
let accountId: string;
let ownerId: string;
let ownerEmail: string;
let key: string;
let keyId: string;

/** The events written since `mark`, oldest first, as the table holds them. */
async function eventsSince(mark: number) {
  return t.app.core.sql`
    select account_id, actor_type, actor_id, actor_label, action, target_type, target_id, target_label, details,
      ip, user_agent
    from audit_event where id > ${mark} order by id`;
}
const lastId = async () => Number((await t.app.core.sql`select coalesce(max(id), 0) as n from audit_event`)[0]!.n);

/** Runs `act` and answers the events it left. */
async function leaves(act: () => Promise<unknown>) {
  const mark = await lastId();
  await act();
  return eventsSince(mark);
}

const byOwner = () => ({ account_id: accountId, actor_type: 'user', actor_id: ownerId, actor_label: ownerEmail });

beforeAll(async () => {
  slack = await startFakeSlack({ channels: [{ name: 'leads', isMember: true }] });
  t = await startIdentityApp({
    destinations: destinations({
      SECRETS_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      SLACK_BASE_URL: slack.url,
      SLACK_CLIENT_ID: slack.clientId,
      SLACK_CLIENT_SECRET: slack.clientSecret,
    }),
  });
});
afterAll(async () => {
  await t?.stop();
  await slack?.close();
});

/** Invites `email` as `role` from the owner, follows the mailed link and accepts it: the invitee's browser. */
async function join(email: string, role: Role): Promise<Browser> {
  const from = t.mail.mails.length;
  expect((await owner.graphql(Invite, { input: { email, role } })).body.data!.inviteMember.userErrors).toEqual([]);
  const link = await t.mail.linkTo(email, '/invitations/', from);
  const browser = t.browser();
  const accepted = await browser.request('POST', '/auth/invitations/accept', {
    body: { token: link.split('/invitations/')[1], password: PASSWORD, name: 'Member' },
  });
  expect(accepted.status).toBe(200);
  return browser;
}

describe('sessions', () => {
  it('a sign-up: the new owner signed in, from the request’s address', async () => {
    const [signedUp, ...more] = await leaves(async () => {
      owner = await t.signUp('audit-owner@example.com');
    });
    expect(more).toEqual([]);
    const viewer = (await owner.graphql(Viewer)).body.data!;
    accountId = viewer.viewer.id;
    ownerId = viewer.currentUser!.id;
    ownerEmail = viewer.currentUser!.email;
    expect(signedUp).toMatchObject({
      ...byOwner(),
      action: 'session.signed_in',
      target_type: 'session',
      details: { method: 'sign_up' },
      ip: '127.0.0.1',
    });
    expect(signedUp!.target_id).toMatch(/^ses_/);
  });

  it('a sign-in, a sign-out, a session ended from the list, and signing out everywhere', async () => {
    const second = t.browser();
    const [signedIn, ...more] = await leaves(() =>
      second.request('POST', '/auth/sign-in', {
        body: { email: ownerEmail, password: PASSWORD },
        headers: { 'user-agent': AGENT },
      }),
    );
    expect(more).toEqual([]);
    expect(signedIn).toMatchObject({ ...byOwner(), action: 'session.signed_in', details: { method: 'password' } });
    expect(signedIn).toMatchObject({ ip: '127.0.0.1', user_agent: AGENT });
    const signedOut = await leaves(() =>
      second.request('POST', '/auth/sign-out', { headers: { 'user-agent': AGENT } }),
    );
    expect(signedOut).toEqual([
      expect.objectContaining({
        ...byOwner(),
        action: 'session.signed_out',
        target_id: signedIn!.target_id,
        user_agent: AGENT,
      }),
    ]);
    // Signing out again finds no live session: nothing happened, nothing is recorded.
    expect(await leaves(() => second.request('POST', '/auth/sign-out'))).toEqual([]);

    const third = t.browser();
    await third.request('POST', '/auth/sign-in', { body: { email: ownerEmail, password: PASSWORD } });
    const sessions = (await owner.graphql(Sessions)).body.data!.sessions.nodes;
    const other = sessions.find((s) => !s.current)!;
    const ended = await leaves(() => owner.graphql(RevokeSession, { id: other.id }));
    expect(ended).toEqual([
      expect.objectContaining({ ...byOwner(), action: 'session.revoked', target_type: 'session', target_id: other.id }),
    ]);

    const fourth = t.browser();
    await fourth.request('POST', '/auth/sign-in', { body: { email: ownerEmail, password: PASSWORD } });
    const everywhere = await leaves(() => fourth.graphql(SignOutEverywhere));
    expect(everywhere).toEqual([
      expect.objectContaining({
        ...byOwner(),
        action: 'session.revoked_all',
        target_type: null,
        details: { sessions: 2 },
      }),
    ]);
    owner = t.browser();
    await owner.request('POST', '/auth/sign-in', { body: { email: ownerEmail, password: PASSWORD } });
  });
});

describe('keys and members', () => {
  it('a key created and revoked in the console, named by its name and prefix', async () => {
    const [created, ...more] = await leaves(async () => {
      const made = (await owner.graphql(CreateKey, { name: 'ci' })).body.data!.createApiKey;
      key = made.secret!;
      keyId = made.apiKey!.id;
    });
    expect(more).toEqual([]);
    const prefix = key.slice(0, 14);
    expect(created).toMatchObject({
      ...byOwner(),
      action: 'api_key.created',
      target_type: 'api_key',
      target_id: keyId,
      target_label: `ci (${prefix}…)`,
      details: { name: 'ci', expiresAt: null },
      ip: '127.0.0.1',
    });
    // The secret is in no event.
    expect(JSON.stringify(created)).not.toContain(key);

    const other = (await owner.graphql(CreateKey, { name: 'old' })).body.data!.createApiKey.apiKey!.id;
    const revoked = await leaves(() => owner.graphql(RevokeKey, { id: other }));
    expect(revoked).toEqual([
      expect.objectContaining({ ...byOwner(), action: 'api_key.revoked', target_id: other, details: { name: 'old' } }),
    ]);
    // A refused revocation (the key is revoked already) leaves nothing.
    expect(await leaves(() => owner.graphql(RevokeKey, { id: other }))).toEqual([]);
  });

  it('an invitation sent and withdrawn, accepted, a role changed and a member removed', async () => {
    const invited = await leaves(() =>
      owner.graphql(Invite, { input: { email: 'audit-gone@example.com', role: 'MEMBER' } }),
    );
    expect(invited).toEqual([
      expect.objectContaining({
        ...byOwner(),
        action: 'member.invited',
        target_type: 'invitation',
        target_label: 'audit-gone@example.com',
        details: { email: 'audit-gone@example.com', role: 'member' },
      }),
    ]);
    const withdrawn = await leaves(() => owner.graphql(RevokeInvitation, { id: invited[0]!.target_id }));
    expect(withdrawn).toEqual([
      expect.objectContaining({ ...byOwner(), action: 'invitation.revoked', target_id: invited[0]!.target_id }),
    ]);

    const mark = await lastId();
    await join('audit-member@example.com', 'MEMBER');
    const [inv, joined, signedIn, ...more] = await eventsSince(mark);
    expect(more).toEqual([]);
    expect(inv).toMatchObject({ action: 'member.invited' });
    expect(joined).toMatchObject({
      account_id: accountId,
      actor_type: 'user',
      actor_label: 'audit-member@example.com',
      action: 'member.joined',
      target_type: 'membership',
      target_label: 'audit-member@example.com',
      details: { role: 'member' },
    });
    expect(signedIn).toMatchObject({ actor_id: joined!.actor_id, action: 'session.signed_in' });
    expect(signedIn!.details).toEqual({ method: 'invitation' });

    const membership = (await owner.graphql(Members)).body.data!.viewer.members.nodes.find(
      (m) => m.user.email === 'audit-member@example.com',
    )!;
    const changed = await leaves(() =>
      owner.graphql(ChangeRole, { input: { membershipId: membership.id, role: 'ADMIN' } }),
    );
    expect(changed).toEqual([
      expect.objectContaining({
        ...byOwner(),
        action: 'member.role_changed',
        target_type: 'membership',
        target_id: membership.id,
        target_label: 'audit-member@example.com',
        details: { from: 'member', to: 'admin' },
      }),
    ]);
    const removed = await leaves(() => owner.graphql(RemoveMember, { id: membership.id }));
    expect(removed).toEqual([
      expect.objectContaining({
        ...byOwner(),
        action: 'member.removed',
        target_id: membership.id,
        details: { role: 'admin', revokedKeys: 0, left: false },
      }),
    ]);
  });
});

describe('the operator’s keys', () => {
  it('a key created and revoked on the command line: the operator is the actor, the key’s account the log', async () => {
    const { createOperatorKey, revokeApiKey } = await import('../../src/accounts/accounts.ts');
    let made = { keyId: '', prefix: '', apiKey: '' };
    const created = await leaves(async () => {
      made = await createOperatorKey(t.app.core.db, accountId);
    });
    const operator = { account_id: accountId, actor_type: 'operator', actor_id: null, actor_label: 'Operator' };
    expect(created).toEqual([
      expect.objectContaining({
        ...operator,
        action: 'api_key.created',
        target_id: made.keyId,
        target_label: `API key (${made.prefix}…)`,
        details: { name: 'API key', expiresAt: null },
        ip: null,
      }),
    ]);
    expect(JSON.stringify(created)).not.toContain(made.apiKey);
    const revoked = await leaves(() => revokeApiKey(t.app.core.db, made.prefix));
    expect(revoked).toEqual([
      expect.objectContaining({ ...operator, action: 'api_key.revoked', target_id: made.keyId }),
    ]);
    // A prefix with no active key: refused, and nothing recorded.
    expect(await leaves(() => revokeApiKey(t.app.core.db, made.prefix).catch((e: Error) => e.message))).toEqual([]);
  });
});

describe('webhooks', () => {
  it('added and deleted with a key, named by the receiver’s host only (its path may hold its secret)', async () => {
    const url = 'https://hooks.receiver.test/services/T01/B02/s3cretPathPart';
    let id = '';
    const added = await leaves(async () => {
      const res = await fetch(`${t.url}/api/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': AGENT },
        body: JSON.stringify({ url, events: ['run.succeeded', 'run.failed'] }),
      });
      expect(res.status).toBe(201);
      id = ((await res.json()) as { webhook: { id: string } }).webhook.id;
    });
    const byKey = { account_id: accountId, actor_type: 'api_key', actor_id: keyId, user_agent: AGENT };
    expect(added).toEqual([
      expect.objectContaining({
        ...byKey,
        action: 'webhook.created',
        target_type: 'webhook',
        target_id: id,
        target_label: 'hooks.receiver.test',
        details: { host: 'hooks.receiver.test', events: ['run.succeeded', 'run.failed'] },
      }),
    ]);
    expect(JSON.stringify(added)).not.toContain('s3cretPathPart');
    const remove = () =>
      fetch(`${t.url}/api/v1/webhooks/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}`, 'user-agent': AGENT },
      });
    const deleted = await leaves(async () => expect((await remove()).status).toBe(204));
    expect(deleted).toEqual([
      expect.objectContaining({
        ...byKey,
        action: 'webhook.deleted',
        target_id: id,
        details: { host: 'hooks.receiver.test' },
      }),
    ]);
    // Deleted already: a 404, and nothing recorded.
    expect(await leaves(async () => expect((await remove()).status).toBe(404))).toEqual([]);
  });
});

describe('connections', () => {
  it('a provider connected and disconnected by a user, and a connection the provider broke', async () => {
    const token = slack.issueBotToken(['chat:write', 'channels:read']);
    const input = { provider: 'SLACK' as const, name: 'Team chat', token };
    let connectionId = '';
    const connected = await leaves(async () => {
      const answer = (await owner.graphql(Connect, { input })).body.data!.connectProviderWithToken;
      expect(answer.userErrors).toEqual([]);
      connectionId = answer.connection!.id;
    });
    expect(connected).toEqual([
      expect.objectContaining({
        ...byOwner(),
        action: 'connection.created',
        target_type: 'connection',
        target_id: connectionId,
        target_label: 'Team chat',
        details: { provider: 'slack', method: 'token' },
      }),
    ]);
    expect(JSON.stringify(connected)).not.toContain(token);
    const disconnected = await leaves(() => owner.graphql(Disconnect, { id: connectionId }));
    expect(disconnected).toEqual([
      expect.objectContaining({ ...byOwner(), action: 'connection.removed', details: { provider: 'slack' } }),
    ]);

    const again = (await owner.graphql(Connect, { input: { ...input, token: slack.issueBotToken() } })).body.data!;
    const id = again.connectProviderWithToken.connection!.id;
    const broken = await leaves(() => markBroken(t.app.core, id, 'the token was revoked'));
    expect(broken).toEqual([
      expect.objectContaining({
        account_id: accountId,
        actor_type: 'system',
        actor_id: null,
        action: 'connection.broken',
        target_id: id,
        details: { provider: 'slack', reason: 'the token was revoked' },
        ip: null,
      }),
    ]);
    // Broken once: marking it again changes nothing and records nothing.
    expect(await leaves(() => markBroken(t.app.core, id, 'again'))).toEqual([]);
  });
});

describe('schedules', () => {
  it('created, paused, resumed and deleted by a user, each named by its task; paused by leadgate when it cannot pay', async () => {
    const maps = { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 5 };
    const task = await owner.graphql(CreateTask, { input: { name: 'weekly dentists', tool: 'MAPS', input: maps } });
    expect(task.body.data!.createTask.userErrors).toEqual([]);
    const target = { target_type: 'schedule', target_label: 'weekly dentists' };
    let scheduleId = '';
    const created = await leaves(async () => {
      scheduleId = (await owner.graphql(CreateSchedule, { task: 'weekly dentists' })).body.data!.createSchedule
        .schedule!.id;
    });
    expect(created).toEqual([
      expect.objectContaining({
        ...byOwner(),
        ...target,
        action: 'schedule.created',
        target_id: scheduleId,
        details: {
          taskId: task.body.data!.createTask.task!.id,
          cron: '0 9 * * 1',
          timezone: 'America/Denver',
          exclusive: true,
        },
      }),
    ]);
    const paused = await leaves(() => owner.graphql(PauseSchedule, { schedule: scheduleId }));
    expect(paused).toEqual([
      expect.objectContaining({
        ...byOwner(),
        ...target,
        action: 'schedule.paused',
        target_id: scheduleId,
        details: { taskId: expect.stringMatching(/^tsk_/), reason: 'Paused by hand.' },
      }),
    ]);
    const resumed = await leaves(() => owner.graphql(ResumeSchedule, { schedule: scheduleId }));
    expect(resumed).toEqual([expect.objectContaining({ ...byOwner(), ...target, action: 'schedule.resumed' })]);

    // Due now, on an account whose wallet is empty: the tick pauses it, and leadgate is the actor.
    await t.app.core.sql`update schedule set next_fire_at = now() - interval '1 minute' where id = ${scheduleId}`;
    const [byLeadgate, ...more] = await leaves(() => fireDueSchedules(t.app.core, new Date()));
    expect(more).toEqual([]);
    expect(byLeadgate).toMatchObject({
      account_id: accountId,
      actor_type: 'system',
      action: 'schedule.paused',
      ...target,
    });
    expect(byLeadgate!.details).toEqual({ taskId: expect.stringMatching(/^tsk_/), reason: expect.any(String) });

    const deleted = await leaves(() => owner.graphql(DeleteSchedule, { schedule: scheduleId }));
    expect(deleted).toEqual([
      expect.objectContaining({ ...byOwner(), ...target, action: 'schedule.deleted', target_id: scheduleId }),
    ]);
  });
});

describe('downloads', () => {
  const many = DOWNLOAD_AUDIT_ROWS + 1;
  const rows = Array.from({ length: many }, (_, i) => person('audit', i));

  it(`a run’s file of more than ${DOWNLOAD_AUDIT_ROWS} rows, by its key; a smaller range leaves nothing`, async () => {
    const runId = await writeRun(t, accountId, 'lead-scraper', rows);
    const [downloaded, ...more] = await leaves(async () => {
      const res = await fetch(`${t.url}/api/downloads/${runId}?format=csv`, {
        headers: { authorization: `Bearer ${key}`, 'user-agent': AGENT },
      });
      expect(res.status).toBe(200);
      expect((await res.text()).trim().split('\n')).toHaveLength(many + 1);
    });
    expect(more).toEqual([]);
    expect(downloaded).toMatchObject({
      account_id: accountId,
      actor_type: 'api_key',
      actor_id: keyId,
      actor_label: `ci (${key.slice(0, 14)}…)`,
      action: 'run.downloaded',
      target_type: 'run',
      target_id: runId,
      details: { format: 'csv', rows: many },
      ip: '127.0.0.1',
      user_agent: AGENT,
    });
    const page = await leaves(() =>
      fetch(`${t.url}/api/downloads/${runId}?format=json&limit=${DOWNLOAD_AUDIT_ROWS}`, {
        headers: { authorization: `Bearer ${key}` },
      }).then((r) => r.text()),
    );
    expect(page).toEqual([]);
    const results = await leaves(() =>
      fetch(`${t.url}/api/v1/runs/${runId}/results`, { headers: { authorization: `Bearer ${key}` } }).then((r) =>
        r.text(),
      ),
    );
    expect(results).toEqual([
      expect.objectContaining({ action: 'run.downloaded', details: { format: 'json', rows: many } }),
    ]);
  });

  it('a signed link names the user who asked for it; one that names no one is its own actor', async () => {
    const runId = await writeRun(t, accountId, 'lead-scraper', rows);
    const run = snapshotOf(await getRun(t.app.core.db, accountId, runId));
    const principal = {
      accountId,
      keyId: '',
      keyPrefix: '',
      plan: 'scale' as const,
      subscriptionStatus: 'ACTIVE' as const,
    };
    const asUser = { ...principal, userId: ownerId, role: 'owner' as const, sessionId: 'ses_x' };
    const path = await signedDownloadPath(t.app.core, asUser, run, 'json');
    expect(new URL(path!, t.url).searchParams.get('by')).toBe(ownerId);
    const [byLink] = await leaves(() => fetch(new URL(path!, t.url)).then((r) => r.text()));
    expect(byLink).toMatchObject({ ...byOwner(), action: 'run.downloaded', target_id: runId });
    // The signer cannot be swapped: the signature covers it.
    const forged = new URL(path!, t.url);
    forged.searchParams.set('by', keyId);
    expect((await fetch(forged)).status).toBe(401);
    // A Slack summary's link names no one.
    const unnamed = signDownload(
      await getInstallationSecret(t.app.core.db),
      { accountId, runId, format: 'csv' },
      new Date(),
    );
    const [byNoOne] = await leaves(() => fetch(`${t.url}/api/downloads/${runId}?${unnamed}`).then((r) => r.text()));
    expect(byNoOne).toMatchObject({
      account_id: accountId,
      actor_type: 'link',
      actor_id: null,
      actor_label: 'Signed link',
      action: 'run.downloaded',
    });
  });

  it(`a dataset’s export and a pipeline’s table of more than ${DOWNLOAD_AUDIT_ROWS} rows`, async () => {
    const runId = await writeRun(t, accountId, 'lead-scraper', rows);
    const sql = t.app.core.sql;
    await sql`insert into account_dataset (id, account_id, name, tool) values ('ds_audit', ${accountId}, 'leads', 'lead-scraper')`;
    await sql`insert into dataset_item (account_id, dataset, key, run_id, seq, delivered_at)
      select ${accountId}, 'leads', 'k' || s, ${runId}, s, now() from generate_series(0, ${many - 1}) s`;
    const exported = await leaves(() =>
      fetch(`${t.url}/api/v1/datasets/leads/export?format=csv`, { headers: { authorization: `Bearer ${key}` } }).then(
        (r) => r.text(),
      ),
    );
    expect(exported).toEqual([
      expect.objectContaining({
        actor_id: keyId,
        action: 'dataset.exported',
        target_type: 'dataset',
        target_id: 'ds_audit',
        target_label: 'leads',
        details: { format: 'csv', rows: many },
      }),
    ]);

    await sql`insert into pipeline (id, account_id, status, steps, quoted_micros, finished_at, expires_at)
      values ('plp_audit', ${accountId}, 'SUCCEEDED', ${JSON.stringify([{ tool: 'lead-scraper', input: {} }])}::jsonb, '[0]', now(),
        now() + interval '1 day')`;
    await sql`update run set pipeline_id = 'plp_audit', pipeline_step = 0 where id = ${runId}`;
    const table = await leaves(async () => {
      const res = await fetch(`${t.url}/api/v1/pipelines/plp_audit/download?format=json`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as unknown[]).length).toBe(many);
    });
    expect(table).toEqual([
      expect.objectContaining({
        actor_id: keyId,
        action: 'pipeline.downloaded',
        target_type: 'pipeline',
        target_id: 'plp_audit',
        details: { format: 'json', rowsOver: DOWNLOAD_AUDIT_ROWS },
      }),
    ]);
  });
});
