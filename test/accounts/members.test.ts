import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeCode, disposeClients, wsClient } from '../helpers/ws.ts';
import { startIdentityApp, type Browser, type IdentityApp } from '../helpers/identity.ts';
import { createMailer } from '../../src/net/mail.ts';
import { createLogger } from '../../src/logger.ts';
import { ensureDemoAccount } from '../../src/accounts/demo.ts';
import { sourceOf } from '../helpers/documents.ts';
import { graphql } from '../helpers/gql/index.ts';
import type { Role } from '../helpers/gql/graphql.ts';

/**
 * Teams in the console: invitations followed from the mail a local SMTP server receives, roles (what
 * a member and an admin may not do), keys created in the console on every face, expired keys, mail
 * without SMTP and the demo account. Password resets: password-reset.test.ts.
 */

const InviteMember = graphql(`
  mutation IdentityMembersInvite($input: InviteMemberInput!) { inviteMember(input: $input) { invitation { id email role invitedBy { email } } link userErrors { code field message } } }
`);
const Invitations = graphql(
  `query IdentityMembersInvitations { viewer { invitations { totalCount nodes { email role } } } }`,
);
const Members = graphql(
  `query IdentityMembersMembers { viewer { members { totalCount nodes { role user { email } } } invitations { totalCount } } }`,
);
const MemberIds = graphql(`query IdentityMembersMemberIds { viewer { members { nodes { id user { email } } } } }`);
const KeyCount = graphql(`query IdentityMembersKeyCount { viewer { id apiKeys { totalCount } } }`);
const LedgerCount = graphql(`query IdentityMembersLedgerCount { viewer { ledger { totalCount } } }`);
const MemberCount = graphql(`query IdentityMembersMemberCount { viewer { members { totalCount } } }`);
const BuyCredits = graphql(
  `mutation IdentityMembersBuyCredits { buyCredits(amount: "100") { purchase { amount } userErrors { code } } }`,
);
const CreateMineKey = graphql(
  `mutation IdentityMembersCreateMineKey { createApiKey(input: {name: "mine"}) { secret userErrors { code } } }`,
);
const Wallet = graphql(`query IdentityMembersWallet { viewer { viewerRole wallet { totalBalance } } }`);
const StartMaps = graphql(`
  mutation IdentityMembersStartMaps {
    startMapsScrape(input: {searchStringsArray: ["dentist"], locationQuery: "Denver, CO", maxCrawledPlacesPerSearch: 5}) { run { id status } userErrors { code message } }
  }
`);
const LedgerIds = graphql(`query IdentityMembersLedgerIds { viewer { ledger { totalCount nodes { id } } } }`);
const NodeId = graphql(`query IdentityMembersNodeId($id: ID!) { node(id: $id) { id } }`);
const ChangeRole = graphql(`
  mutation IdentityMembersChangeRole($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { membership { role } userErrors { code } } }
`);
const RemoveMember = graphql(
  `mutation IdentityMembersRemove($id: ID!) { removeMember(id: $id) { removedMembershipId userErrors { code } } }`,
);
const ViewerRole = graphql(`query IdentityMembersViewerRole { viewer { viewerRole } }`);
const ViewerId = graphql(`query IdentityMembersViewerId { viewer { id } }`);
const CreateProductionKey = graphql(`
  mutation IdentityMembersCreateProductionKey {
    createApiKey(input: {name: "production"}) { secret apiKey { id name prefix createdBy { email } lastUsedAt expiresAt revokedAt } userErrors { code } }
  }
`);
const ListedKeys = graphql(
  `query IdentityMembersListedKeys { viewer { apiKeys { totalCount nodes { id name lastUsedAt } } } }`,
);
const CreateMoreKey = graphql(
  `mutation IdentityMembersCreateMoreKey { createApiKey(input: {name: "more"}) { secret userErrors { code } } }`,
);
const RevokeKey = graphql(
  `mutation IdentityMembersRevokeKey($id: ID!) { revokeApiKey(id: $id) { apiKey { revokedAt } userErrors { code } } }`,
);
const KeyCounts = graphql(
  `query IdentityMembersKeyCounts { viewer { apiKeys { totalCount } all: apiKeys(includeRevoked: true) { totalCount } } }`,
);
const CreateExpiringKey = graphql(`
  mutation IdentityMembersCreateExpiringKey($at: DateTime) { createApiKey(input: {name: "short-lived", expiresAt: $at}) { secret apiKey { id expiresAt } userErrors { code } } }
`);
const CreateExpiredKey = graphql(`
  mutation IdentityMembersCreateExpiredKey { createApiKey(input: {name: "x", expiresAt: "2020-01-01T00:00:00Z"}) { secret userErrors { code field } } }
`);
const KeyUses = graphql(`query IdentityMembersKeyUses { viewer { apiKeys { nodes { id lastUsedAt } } } }`);
const PlanRole = graphql(`query IdentityMembersPlanRole { viewer { plan viewerRole } }`);

const PASSWORD = 'correct horse battery';
let t: IdentityApp;

beforeAll(async () => {
  t = await startIdentityApp();
});
afterAll(() => t?.stop());
afterEach(() => disposeClients());

const invite = (browser: Browser, email: string, role: Role) =>
  browser.graphql(InviteMember, { input: { email, role } });

/** Invites `email` as `role` from `owner`, follows the mailed link and accepts it: the invitee's browser. */
async function join(owner: Browser, email: string, role: Role, password = PASSWORD): Promise<Browser> {
  const from = t.mail.mails.length;
  const sent = await invite(owner, email, role);
  expect(sent.body.data!.inviteMember.userErrors).toEqual([]);
  const link = await t.mail.linkTo(email, '/invitations/', from);
  const token = link.split('/invitations/')[1]!;
  const browser = t.browser();
  const accepted = await browser.request('POST', '/auth/invitations/accept', {
    body: { token, password, name: email.split('@')[0] },
  });
  expect(accepted.status).toBe(200);
  return browser;
}

describe('what the console is told a role may do', () => {
  it('answers each role’s permissions with the session, the rule the gateway enforces', async () => {
    const owner = await t.signUp('perm-owner@example.com');
    const admin = await join(owner, 'perm-admin@example.com', 'ADMIN');
    const member = await join(owner, 'perm-member@example.com', 'MEMBER');
    const permissionsOf = async (browser: Browser) => (await browser.request('GET', '/auth/session')).body.permissions;
    expect(await permissionsOf(owner)).toEqual([
      'billing',
      'webhooks',
      'keys',
      'members',
      'connections',
      'suppressions',
      'audit',
    ]);
    expect(await permissionsOf(admin)).toEqual(['webhooks', 'keys', 'members', 'connections', 'suppressions', 'audit']);
    expect(await permissionsOf(member)).toEqual([]);
    // The roles each may give, which are also the roles of the members each may change (only owners touch owners).
    const assignableOf = async (browser: Browser) =>
      (await browser.request('GET', '/auth/session')).body.assignableRoles;
    expect(await assignableOf(owner)).toEqual(['member', 'admin', 'owner']);
    expect(await assignableOf(admin)).toEqual(['member', 'admin']);
    expect(await assignableOf(member)).toEqual([]);
    // What the session says a member may not do, the gateway refuses.
    expect((await member.graphql(LedgerCount)).body.errors?.[0]?.extensions?.code).toBe('ROLE_REQUIRED');
    expect((await admin.graphql(LedgerCount)).body.errors?.[0]?.extensions?.code).toBe('ROLE_REQUIRED');
    expect((await owner.graphql(LedgerCount)).body.data?.viewer.ledger.totalCount).toEqual(expect.any(Number));
  });
});

describe('invitations', () => {
  it('mails a link whose page shows the invitation; accepting signs the new user in on the inviting account, once', async () => {
    const owner = await t.signUp('owner1@example.com');
    const ownerAccount = (await owner.request('GET', '/auth/session')).body.account;
    const from = t.mail.mails.length;
    const sent = await invite(owner, 'New.Person@example.com', 'MEMBER');
    expect(sent.body.data!.inviteMember).toMatchObject({
      invitation: { email: 'new.person@example.com', role: 'MEMBER', invitedBy: { email: 'owner1@example.com' } },
      userErrors: [],
    });
    const link = await t.mail.linkTo('new.person@example.com', '/invitations/', from);
    expect(link.startsWith(`${t.url}/invitations/`)).toBe(true);
    // The answer carries the same link, to share another way; it is stored nowhere but as the token's hash.
    expect(sent.body.data!.inviteMember.link).toBe(link);
    const token = link.split('/invitations/')[1]!;
    expect(await t.app.core.sql`select 1 from invitation where token_hash = ${token}`).toHaveLength(0);

    const page = await t.browser().request('GET', `/auth/invitations/${token}`);
    expect(page.body).toMatchObject({
      email: 'new.person@example.com',
      accountName: ownerAccount.name,
      role: 'member',
      userExists: false,
    });
    const listed = await owner.graphql(Invitations);
    expect(listed.body.data!.viewer.invitations).toEqual({
      totalCount: 1,
      nodes: [{ email: 'new.person@example.com', role: 'MEMBER' }],
    });

    const browser = t.browser();
    const accepted = await browser.request('POST', '/auth/invitations/accept', {
      body: { token, password: PASSWORD, name: 'New' },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      user: { email: 'new.person@example.com', name: 'New' },
      account: ownerAccount,
      role: 'member',
    });
    expect((await t.browser().request('GET', `/auth/invitations/${token}`)).status).toBe(404);
    expect(
      (await t.browser().request('POST', '/auth/invitations/accept', { body: { token, password: PASSWORD } })).status,
    ).toBe(404);
    const members = await owner.graphql(Members);
    expect(members.body.data!.viewer).toEqual({
      members: {
        totalCount: 2,
        nodes: [
          { role: 'OWNER', user: { email: 'owner1@example.com' } },
          { role: 'MEMBER', user: { email: 'new.person@example.com' } },
        ],
      },
      invitations: { totalCount: 0 },
    });
    expect((await invite(owner, 'new.person@example.com', 'ADMIN')).body.data!.inviteMember.userErrors[0]!.code).toBe(
      'ALREADY_MEMBER',
    );
  });

  it('asks an existing user for their own password (401 otherwise) and adds the account to them', async () => {
    const owner = await t.signUp('owner2@example.com');
    await t.signUp('existing@example.com');
    const from = t.mail.mails.length;
    await invite(owner, 'existing@example.com', 'ADMIN');
    const token = (await t.mail.linkTo('existing@example.com', '/invitations/', from)).split('/invitations/')[1]!;
    expect((await t.browser().request('GET', `/auth/invitations/${token}`)).body.userExists).toBe(true);
    const wrong = await t
      .browser()
      .request('POST', '/auth/invitations/accept', { body: { token, password: 'somebody else’s password' } });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'invalid_credentials']);
    const ok = await t.browser().request('POST', '/auth/invitations/accept', { body: { token, password: PASSWORD } });
    expect(ok.body).toMatchObject({ user: { email: 'existing@example.com' }, role: 'admin' });
  });
});

describe('roles', () => {
  it('a member cannot list keys or the ledger or buy credits (ROLE_REQUIRED), but sees the balance and starts a run', async () => {
    // Verified: the member's run spends the account's trial credits.
    const owner = await t.signUpVerified('owner3@example.com');
    const member = await join(owner, 'member3@example.com', 'MEMBER');
    const keys = await member.graphql(KeyCount);
    expect(keys.body.errors![0]).toMatchObject({ path: ['viewer', 'apiKeys'], extensions: { code: 'ROLE_REQUIRED' } });
    const ledger = await member.graphql(LedgerCount);
    expect(ledger.body.errors![0]).toMatchObject({ path: ['viewer', 'ledger'], extensions: { code: 'ROLE_REQUIRED' } });
    const members = await member.graphql(MemberCount);
    expect(members.body.errors![0]!.extensions!.code).toBe('ROLE_REQUIRED');
    const buy = await member.graphql(BuyCredits);
    expect(buy.body.data!.buyCredits).toEqual({ purchase: null, userErrors: [{ code: 'ROLE_REQUIRED' }] });
    const createKey = await member.graphql(CreateMineKey);
    expect(createKey.body.data!.createApiKey).toEqual({ secret: null, userErrors: [{ code: 'ROLE_REQUIRED' }] });
    expect((await invite(member, 'friend@example.com', 'MEMBER')).body.data!.inviteMember.userErrors[0]!.code).toBe(
      'ROLE_REQUIRED',
    );

    const wallet = await member.graphql(Wallet);
    expect(wallet.body.data!.viewer.viewerRole).toBe('MEMBER');
    expect(wallet.body.data!.viewer.wallet.totalBalance).toMatch(/^\d+\.\d{2,}$/);
    const run = await member.graphql(StartMaps);
    expect(run.body.data!.startMapsScrape.userErrors).toEqual([]);
    expect(run.body.data!.startMapsScrape.run!.id).toMatch(/^[A-Za-z0-9]{17}$/);
    // The owner's ledger shows the run's hold: the owner may read it; the member cannot refetch an entry by id either.
    const ownerLedger = (await owner.graphql(LedgerIds)).body.data!.viewer.ledger;
    expect(ownerLedger.totalCount).toBeGreaterThan(1);
    const entryId = ownerLedger.nodes[0]!.id;
    expect((await owner.graphql(NodeId, { id: entryId })).body.data!.node).toEqual({ id: entryId });
    expect((await member.graphql(NodeId, { id: entryId })).body.data!.node).toBeNull();
  });

  it('an admin manages members but not owners; the last owner can be neither removed nor demoted', async () => {
    const owner = await t.signUp('owner4@example.com');
    const admin = await join(owner, 'admin4@example.com', 'ADMIN');
    const member = await join(owner, 'member4@example.com', 'MEMBER');
    const nodes = (await owner.graphql(MemberIds)).body.data!.viewer.members.nodes;
    const byEmail: Record<string, string> = Object.fromEntries(nodes.map((m) => [m.user.email, m.id]));
    const change = (as: Browser, membershipId: string, role: Role) =>
      as.graphql(ChangeRole, { input: { membershipId, role } });
    const remove = (as: Browser, id: string) => as.graphql(RemoveMember, { id });

    expect((await remove(admin, byEmail['owner4@example.com']!)).body.data!.removeMember.userErrors).toEqual([
      { code: 'ROLE_REQUIRED' },
    ]);
    expect(
      (await change(admin, byEmail['member4@example.com']!, 'OWNER')).body.data!.changeMemberRole.userErrors,
    ).toEqual([{ code: 'ROLE_REQUIRED' }]);
    expect((await invite(admin, 'boss@example.com', 'OWNER')).body.data!.inviteMember.userErrors[0]!.code).toBe(
      'ROLE_REQUIRED',
    );
    expect((await change(admin, byEmail['member4@example.com']!, 'ADMIN')).body.data!.changeMemberRole).toEqual({
      membership: { role: 'ADMIN' },
      userErrors: [],
    });
    expect((await member.graphql(ViewerRole)).body.data!.viewer.viewerRole).toBe('ADMIN');

    expect((await remove(owner, byEmail['owner4@example.com']!)).body.data!.removeMember.userErrors).toEqual([
      { code: 'LAST_OWNER' },
    ]);
    expect(
      (await change(owner, byEmail['owner4@example.com']!, 'MEMBER')).body.data!.changeMemberRole.userErrors,
    ).toEqual([{ code: 'LAST_OWNER' }]);
    expect((await remove(admin, byEmail['member4@example.com']!)).body.data!.removeMember).toEqual({
      removedMembershipId: byEmail['member4@example.com']!,
      userErrors: [],
    });
    // Removed: the member's session on the account ends.
    expect((await member.graphql(ViewerId)).status).toBe(401);
    const [{ n }] = (await t.app.core
      .sql`select count(*)::int as n from membership m join app_user u on u.id = m.user_id where u.email = 'owner4@example.com' and m.role = 'owner'`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(1);
  });
});

describe('API keys from the console', () => {
  it('a key created over GraphQL works on REST and MCP, carries its name and creator, and shows its last use', async () => {
    const owner = await t.signUp('owner5@example.com');
    const created = await owner.graphql(CreateProductionKey);
    const { secret, apiKey } = created.body.data!.createApiKey;
    expect(secret).toMatch(/^lg_live_[A-Za-z0-9]{32}$/);
    expect(apiKey).toMatchObject({
      name: 'production',
      prefix: secret!.slice(0, 14),
      createdBy: { email: 'owner5@example.com' },
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
    });
    const stored = await t.app.core.sql`select * from api_key where id = ${apiKey!.id}`;
    expect(JSON.stringify(stored)).not.toContain(secret);

    expect((await fetch(`${t.url}/api/v1/wallet`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(
      200,
    );
    const mcp = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${secret}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(mcp.status).toBe(200);
    await mcp.text();
    const listed = await owner.graphql(ListedKeys);
    expect(listed.body.data!.viewer.apiKeys.totalCount).toBe(1);
    const used = await waitForLastUse(owner, apiKey!.id);
    expect(Date.now() - Date.parse(used)).toBeLessThan(60_000);

    // Keys keep every right they had, but cannot manage keys.
    const byKey = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: sourceOf(CreateMoreKey) }),
    });
    expect((await byKey.json()).data.createApiKey).toEqual({ secret: null, userErrors: [{ code: 'ROLE_REQUIRED' }] });

    const revoked = await owner.graphql(RevokeKey, { id: apiKey!.id });
    expect(revoked.body.data!.revokeApiKey.apiKey!.revokedAt).not.toBeNull();
    expect((await fetch(`${t.url}/api/v1/wallet`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(
      401,
    );
    expect((await owner.graphql(KeyCounts)).body.data!.viewer).toEqual({
      apiKeys: { totalCount: 0 },
      all: { totalCount: 1 },
    });
  });

  it('an expired key is refused on REST, GraphQL, graphql-ws and MCP', async () => {
    const owner = await t.signUp('owner6@example.com');
    const future = new Date(Date.now() + 3600_000).toISOString();
    const created = await owner.graphql(CreateExpiringKey, { at: future });
    const secret = created.body.data!.createApiKey.secret!;
    const apiKey = created.body.data!.createApiKey.apiKey!;
    expect(Date.parse(apiKey.expiresAt!)).toBe(Date.parse(future));
    const past = await owner.graphql(CreateExpiredKey);
    expect(past.body.data!.createApiKey.userErrors).toEqual([
      { code: 'VALIDATION_FAILED', field: ['input', 'expiresAt'] },
    ]);
    expect((await fetch(`${t.url}/api/v1/wallet`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(
      200,
    );

    await t.app.core.sql`update api_key set expires_at = now() - interval '1 second' where id = ${apiKey.id}`;
    expect((await fetch(`${t.url}/api/v1/wallet`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(
      401,
    );
    const gql = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: sourceOf(ViewerId) }),
    });
    expect(gql.status).toBe(401);
    const mcp = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${secret}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(mcp.status).toBe(401);
    const client = wsClient(t.url, secret);
    const closed = closeCode(client);
    client.subscribe({ query: sourceOf(ViewerId) }, { next: () => {}, error: () => {}, complete: () => {} });
    expect(await closed).toBe(4401);
  });
});

async function waitForLastUse(owner: Browser, id: string): Promise<string> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    const nodes = (await owner.graphql(KeyUses)).body.data!.viewer.apiKeys.nodes;
    const used = nodes.find((k) => k.id === id)?.lastUsedAt;
    if (used) return used;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('lastUsedAt never appeared');
}

describe('mail without SMTP_URL, and the demo account', () => {
  it('writes the mail to the log at info level, with its link, when no SMTP server is configured', async () => {
    const lines: string[] = [];
    const mailer = createMailer(
      { smtpUrl: undefined, from: 'x' },
      createLogger('info', { write: (line: string) => void lines.push(line) }),
    );
    await mailer.send({
      to: 'someone@example.com',
      subject: 'Set your leadgate password',
      text: 'Set a new password: http://localhost:4000/reset-password?token=abc',
      html: '<p>x</p>',
    });
    const line = JSON.parse(lines.join(''));
    expect(line).toMatchObject({
      level: 30,
      mail: {
        subject: 'Set your leadgate password',
        text: 'Set a new password: http://localhost:4000/reset-password?token=abc',
      },
    });
    expect(line.mail.to).toMatch(/@example\.com$/);
  });

  it('gives the demo account an owner without a password, whose one-time link sets it and signs in', async () => {
    const demo = await ensureDemoAccount(t.app.core.db);
    expect(demo).toMatchObject({ ownerEmail: 'demo@leadgate.local', apiKey: expect.stringMatching(/^lg_live_/) });
    expect((await ensureDemoAccount(t.app.core.db)).passwordToken).toBeUndefined();
    expect(
      (
        await t
          .browser()
          .request('POST', '/auth/sign-in', { body: { email: 'demo@leadgate.local', password: 'whatever it is' } })
      ).status,
    ).toBe(401);
    const browser = t.browser();
    const set = await browser.request('POST', '/auth/password-reset/confirm', {
      body: { token: demo.passwordToken, password: 'the demo password' },
    });
    expect(set.body).toMatchObject({
      user: { email: 'demo@leadgate.local' },
      account: { id: demo.accountId, name: 'demo' },
      role: 'owner',
    });
    expect((await browser.graphql(PlanRole)).body.data!.viewer).toEqual({ plan: 'SCALE', viewerRole: 'OWNER' });
  });
});
