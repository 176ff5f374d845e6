import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../helpers/gql/index.ts';
import type { Role } from '../helpers/gql/graphql.ts';
import { type Browser, type IdentityApp, startIdentityApp } from '../helpers/identity.ts';

/**
 * Reading the audit log: owners and admins page and filter it on GraphQL and REST and export it as CSV
 * and JSON (the export an event itself, the file holding the events before it); a member, or a key
 * acting as one, is refused in words that name no route of another face; a signed export link cannot
 * be altered, and stops working for a user who may no longer read the log.
 */

const Viewer = graphql(`query AuditReadViewer { viewer { id } currentUser { id } }`);
const Invite = graphql(`
  mutation AuditReadInvite($input: InviteMemberInput!) { inviteMember(input: $input) { invitation { id } userErrors { code } } }
`);
const Members = graphql(`query AuditReadMembers { viewer { members { nodes { id user { email } } } } }`);
const ChangeRole = graphql(`
  mutation AuditReadChangeRole($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { membership { role } userErrors { code } } }
`);
const CreateKey = graphql(
  `mutation AuditReadCreateKey($name: String!) { createApiKey(input: {name: $name}) { secret apiKey { id } userErrors { code } } }`,
);
const Log = graphql(`
  query AuditReadLog($first: Int, $after: String, $filter: AuditLogFilter) {
    auditLog(first: $first, after: $after, filter: $filter) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes {
        id action actionText createdAt ipAddress userAgent
        actor { type id label }
        target { type id label }
        details { name value }
      }
    }
  }
`);
const Actions = graphql(`query AuditReadActions { auditActions { action text } }`);
const Node = graphql(`query AuditReadNode($id: ID!) { node(id: $id) { id ... on AuditEvent { action } } }`);
const Export = graphql(`
  mutation AuditReadExport($format: DownloadFormat!, $filter: AuditLogFilter) {
    exportAuditLog(format: $format, filter: $filter) { downloadPath downloadUrl expiresAt userErrors { code field message } }
  }
`);

const PASSWORD = 'correct horse battery';

let t: IdentityApp;
let owner: Browser;
let admin: Browser;
let member: Browser;
let accountId: string;
let adminKey: string;

async function join(email: string, role: Role): Promise<Browser> {
  const from = t.mail.mails.length;
  await owner.graphql(Invite, { input: { email, role } });
  const link = await t.mail.linkTo(email, '/invitations/', from);
  const browser = t.browser();
  const accepted = await browser.request('POST', '/auth/invitations/accept', {
    body: { token: link.split('/invitations/')[1], password: PASSWORD, name: email.split('@')[0] },
  });
  expect(accepted.status).toBe(200);
  return browser;
}

async function changeRole(email: string, role: Role) {
  const membership = (await owner.graphql(Members)).body.data!.viewer.members.nodes.find(
    (m) => m.user.email === email,
  )!;
  const changed = await owner.graphql(ChangeRole, { input: { membershipId: membership.id, role } });
  expect(changed.body.data!.changeMemberRole.userErrors).toEqual([]);
}

beforeAll(async () => {
  t = await startIdentityApp();
  owner = await t.signUp('read-owner@example.com');
  accountId = (await owner.graphql(Viewer)).body.data!.viewer.id;
  admin = await join('read-admin@example.com', 'ADMIN');
  member = await join('read-member@example.com', 'MEMBER');
  for (const name of ['one', 'two', 'three'])
    expect((await owner.graphql(CreateKey, { name })).body.data!.createApiKey.userErrors).toEqual([]);
  adminKey = (await admin.graphql(CreateKey, { name: 'admin script' })).body.data!.createApiKey.secret!;
});
afterAll(() => t?.stop());

describe('on GraphQL', () => {
  it('owners and admins page the log newest first, with every action in words', async () => {
    const all = (await owner.graphql(Log, { first: 100 })).body.data!.auditLog;
    // Sign-up, two invitations with their joins and sign-ins, four keys.
    expect(all.totalCount).toBe(1 + 2 * 3 + 4);
    expect(all.nodes[0]).toMatchObject({
      action: 'API_KEY_CREATED',
      actionText: 'API key created',
      actor: { type: 'USER', label: 'read-admin@example.com' },
      target: { type: 'API_KEY', label: expect.stringMatching(/^admin script \(lg_live_\w{6}…\)$/) },
      details: [
        { name: 'name', value: 'admin script' },
        { name: 'expiresAt', value: null },
      ],
      ipAddress: '127.0.0.1',
    });
    expect(all.nodes.at(-1)!.action).toBe('SESSION_SIGNED_IN');
    const ids = all.nodes.map((n) => Number(n.id.replace('aev_', '')));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    const first = (await admin.graphql(Log, { first: 4 })).body.data!.auditLog;
    expect(first.nodes.map((n) => n.id)).toEqual(all.nodes.slice(0, 4).map((n) => n.id));
    expect(first.pageInfo.hasNextPage).toBe(true);
    const next = (await admin.graphql(Log, { first: 4, after: first.pageInfo.endCursor })).body.data!.auditLog;
    expect(next.nodes.map((n) => n.id)).toEqual(all.nodes.slice(4, 8).map((n) => n.id));

    const refetched = await owner.graphql(Node, { id: all.nodes[0]!.id });
    expect(refetched.body.data!.node).toEqual({ id: all.nodes[0]!.id, action: 'API_KEY_CREATED' });
    expect((await member.graphql(Node, { id: all.nodes[0]!.id })).body.data!.node).toBeNull();

    const actions = (await owner.graphql(Actions)).body.data!.auditActions;
    expect(actions).toContainEqual({ action: 'MEMBER_ROLE_CHANGED', text: 'Member’s role changed' });
  });

  it('filters by action, actor and time; an `until` before `since` is refused at its field', async () => {
    const created = (await owner.graphql(Log, { filter: { action: 'API_KEY_CREATED' } })).body.data!.auditLog;
    expect(created.totalCount).toBe(4);
    const byAdmin = created.nodes[0]!.actor.id!;
    const mine = (await owner.graphql(Log, { filter: { actorId: byAdmin } })).body.data!.auditLog;
    // The admin joined, signed in and created a key.
    expect(mine.nodes.map((n) => n.action)).toEqual(['API_KEY_CREATED', 'SESSION_SIGNED_IN', 'MEMBER_JOINED']);
    const at = created.nodes[0]!.createdAt;
    const since = (await owner.graphql(Log, { filter: { since: at } })).body.data!.auditLog;
    expect(since.nodes.map((n) => n.createdAt).every((c) => c >= at)).toBe(true);
    const until = (await owner.graphql(Log, { filter: { until: at } })).body.data!.auditLog;
    expect(until.nodes.every((n) => n.createdAt < at)).toBe(true);
    const everything = (await owner.graphql(Log, {})).body.data!.auditLog.totalCount;
    expect(since.totalCount + until.totalCount).toBe(everything);

    const refused = await owner.graphql(Log, { filter: { since: at, until: '2000-01-01T00:00:00Z' } });
    expect(refused.body.errors![0]).toMatchObject({ extensions: { code: 'VALIDATION_FAILED' } });
    expect(refused.body.errors![0]!.message).toMatch(/filter\.until/);
  });

  it('a member is refused the log and its export, in words naming no REST route or status', async () => {
    const read = await member.graphql(Log, {});
    expect(read.body.data).toBeNull();
    const [error] = read.body.errors!;
    expect(error).toMatchObject({ extensions: { code: 'ROLE_REQUIRED' }, path: ['auditLog'] });
    expect(error!.message).toBe(
      'The audit log is read and exported by the account’s owners and admins; your role is member.',
    );
    const exported = await member.graphql(Export, { format: 'CSV' });
    expect(exported.body.data!.exportAuditLog).toMatchObject({
      downloadPath: null,
      userErrors: [{ code: 'ROLE_REQUIRED', field: null, message: expect.stringContaining('your role is member') }],
    });
  });
});

describe('on REST', () => {
  it('a key lists the log page by page and by action, and is refused once its creator is a member', async () => {
    const first = await t.app.http.inject({
      method: 'GET',
      url: '/api/v1/audit-events?limit=2&action=api_key.created',
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(first.statusCode).toBe(200);
    const page = first.json();
    expect(page.events).toHaveLength(2);
    expect(page.events[0]).toMatchObject({
      action: 'api_key.created',
      actionText: 'API key created',
      actor: { type: 'user', label: 'read-admin@example.com' },
      target: { type: 'api_key' },
      details: { name: 'admin script', expiresAt: null },
    });
    const next = (
      await t.app.http.inject({
        method: 'GET',
        url: `/api/v1/audit-events?limit=2&action=api_key.created&after=${page.next_after}`,
        headers: { authorization: `Bearer ${adminKey}` },
      })
    ).json();
    expect(next.events.map((e: { details: { name: string } }) => e.details.name)).toEqual(['two', 'one']);
    expect(next.next_after).toBeNull();
    const bad = await t.app.http.inject({
      method: 'GET',
      url: '/api/v1/audit-events?action=everything',
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details[0].path).toBe('action');

    await changeRole('read-admin@example.com', 'MEMBER');
    try {
      const refused = await t.app.http.inject({
        method: 'GET',
        url: '/api/v1/audit-events',
        headers: { authorization: `Bearer ${adminKey}` },
      });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error).toEqual({
        code: 'role_required',
        message:
          'This key acts with the rights of its creator, a member; the audit log is read and exported by the ' +
          'account’s owners and admins.',
      });
    } finally {
      await changeRole('read-admin@example.com', 'ADMIN');
    }
  });

  it('exports the log as CSV and JSON, recording each export first; the file holds the events before it', async () => {
    const csv = await t.app.http.inject({
      method: 'GET',
      url: '/api/v1/audit-events/export?format=csv&action=api_key.created',
      headers: { authorization: `Bearer ${adminKey}`, 'user-agent': 'exporter/1' },
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="audit-log-${accountId}.csv"`);
    const records = parse(csv.body, { columns: true }) as Record<string, string>[];
    expect(records.map((r) => JSON.parse(r.details!).name)).toEqual(['admin script', 'three', 'two', 'one']);
    expect(Object.keys(records[0]!)).toEqual([
      'id',
      'time',
      'action',
      'action_text',
      'actor_type',
      'actor_id',
      'actor',
      'target_type',
      'target_id',
      'target',
      'details',
      'ip',
      'user_agent',
    ]);
    expect(records[0]).toMatchObject({ action: 'api_key.created', action_text: 'API key created', actor_type: 'user' });

    const json = await t.app.http.inject({
      method: 'GET',
      url: '/api/v1/audit-events/export?format=json',
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(json.statusCode).toBe(200);
    const events = json.json() as { action: string; details: Record<string, unknown>; actor: { type: string } }[];
    // The CSV export is in the file; this export's own event is not.
    expect(events[0]).toMatchObject({
      action: 'audit_log.exported',
      actor: { type: 'api_key' },
      details: { format: 'csv', filter: { action: 'api_key.created' } },
    });
    expect(events.filter((e) => e.action === 'audit_log.exported')).toHaveLength(1);
    const listed = (
      await t.app.http.inject({
        method: 'GET',
        url: '/api/v1/audit-events?action=audit_log.exported',
        headers: { authorization: `Bearer ${adminKey}` },
      })
    ).json();
    expect(listed.events.map((e: { details: { format: string } }) => e.details.format)).toEqual(['json', 'csv']);
    expect(listed.events[1]).toMatchObject({ userAgent: 'exporter/1' });
  });
});

describe('the console’s export link', () => {
  it('downloads the filtered log without a key, names its user, and cannot be altered', async () => {
    const made = (await owner.graphql(Export, { format: 'JSON', filter: { action: 'MEMBER_JOINED' } })).body.data!
      .exportAuditLog;
    expect(made.userErrors).toEqual([]);
    expect(made.downloadPath).toMatch(/^\/api\/downloads\/audit-log\?format=json&account=acc_\w+&by=usr_\w+&action=/);
    expect(made.downloadUrl).toBe(`${t.app.core.config.publicUrl}${made.downloadPath}`);
    const file = await fetch(new URL(made.downloadPath!, t.url));
    expect(file.status).toBe(200);
    const events = (await file.json()) as { action: string }[];
    expect(events.map((e) => e.action)).toEqual(['member.joined', 'member.joined']);
    const viewer = (await owner.graphql(Viewer)).body.data!;
    const [exported] = (await owner.graphql(Log, { first: 1 })).body.data!.auditLog.nodes;
    expect(exported).toMatchObject({
      action: 'AUDIT_LOG_EXPORTED',
      actor: { type: 'USER', id: viewer.currentUser!.id, label: 'read-owner@example.com' },
      // jsonb keeps an object's keys in an order of its own.
      details: expect.arrayContaining([
        { name: 'format', value: 'json' },
        { name: 'filter', value: '{"action":"member.joined"}' },
      ]),
    });

    const widened = new URL(made.downloadPath!, t.url);
    widened.searchParams.delete('action');
    expect((await fetch(widened)).status).toBe(401);
    const expired = new URL(made.downloadPath!, t.url);
    expired.searchParams.set('expires', '1000');
    expect((await fetch(expired)).status).toBe(401);
  });

  it('stops working for a user who may no longer read the log', async () => {
    const made = (await admin.graphql(Export, { format: 'CSV' })).body.data!.exportAuditLog;
    expect(made.userErrors).toEqual([]);
    await changeRole('read-admin@example.com', 'MEMBER');
    const refused = await fetch(new URL(made.downloadPath!, t.url));
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
  });
});
