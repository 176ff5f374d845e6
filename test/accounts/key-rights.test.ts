import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/accounts/accounts.ts';
import { audit, launchConsoleBrowser, visible } from '../helpers/browser.ts';
import { startIdentityApp, type Browser, type IdentityApp } from '../helpers/identity.ts';
import { sourceOf } from '../helpers/documents.ts';
import { graphql } from '../helpers/gql/index.ts';
import type { Role } from '../helpers/gql/graphql.ts';

/**
 * A key never has more rights than its creator: a key created in the console acts with its creator's
 * current role (an admin's key cannot read the ledger or buy credits), narrows when they are demoted,
 * and is revoked when they leave the account, on REST, GraphQL and MCP. The operator's keys (CLI) have
 * no creator and keep every key right. The console's key list shows who made each key, with which
 * rights it acts, and why a revoked one stopped.
 */

const InviteMember = graphql(
  `mutation KeyRightsInvite($input: InviteMemberInput!) { inviteMember(input: $input) { userErrors { code } } }`,
);
const CreateKey = graphql(`
  mutation KeyRightsCreateKey($name: String!) { createApiKey(input: {name: $name}) { secret apiKey { id actsAs createdBy { email } } userErrors { code } } }
`);
const Keys = graphql(`
  query KeyRightsKeys { viewer { apiKeys(includeRevoked: true) { nodes { id name actsAs revokedAt revokedReason createdBy { email name } } } } }
`);
const MemberIds = graphql(`query KeyRightsMemberIds { viewer { members { nodes { id user { email } } } } }`);
const ChangeRole = graphql(
  `mutation KeyRightsChangeRole($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { membership { role } userErrors { code } } }`,
);
const RemoveMember = graphql(
  `mutation KeyRightsRemove($id: ID!) { removeMember(id: $id) { removedMembershipId revokedKeyCount userErrors { code } } }`,
);
const RevokeKey = graphql(
  `mutation KeyRightsRevokeKey($id: ID!) { revokeApiKey(id: $id) { apiKey { actsAs revokedReason } userErrors { code } } }`,
);
const Ledger = graphql(`query KeyRightsLedger { viewer { ledger(first: 1) { totalCount } } }`);
const Statement = graphql(`query KeyRightsStatement { viewer { statement(first: 1) { totalCount } } }`);
const Spent = graphql(`query KeyRightsSpent { viewer { spentThisMonth } }`);
const BuyCredits = graphql(
  `mutation KeyRightsBuyCredits { buyCredits(amount: "100") { purchase { amount } userErrors { code message } } }`,
);
const ViewerId = graphql(`query KeyRightsViewerId { viewer { id } }`);

const PASSWORD = 'correct horse battery';
let t: IdentityApp;

beforeAll(async () => {
  t = await startIdentityApp({ payments: { mode: 'demo' } });
});
afterAll(() => t?.stop());

/** Invites `email` as `role` from `owner` and accepts the mailed link: the invitee's browser. */
async function join(owner: Browser, email: string, role: Role): Promise<Browser> {
  const from = t.mail.mails.length;
  expect((await owner.graphql(InviteMember, { input: { email, role } })).body.data!.inviteMember.userErrors).toEqual(
    [],
  );
  const token = (await t.mail.linkTo(email, '/invitations/', from)).split('/invitations/')[1]!;
  const browser = t.browser();
  expect(
    (
      await browser.request('POST', '/auth/invitations/accept', {
        body: { token, password: PASSWORD, name: email.split('@')[0] },
      })
    ).status,
  ).toBe(200);
  return browser;
}

/** A team with an ACTIVE subscription (credits can be bought): its owner's browser and account id. */
async function team(ownerEmail: string) {
  const owner = await t.signUp(ownerEmail);
  const accountId: string = (await owner.request('GET', '/auth/session')).body.account.id;
  await t.app.core.sql`update account set subscription_status = 'ACTIVE' where id = ${accountId}`;
  return { owner, accountId };
}

async function createKey(browser: Browser, name: string) {
  const created = (await browser.graphql(CreateKey, { name })).body.data!.createApiKey;
  expect(created.userErrors).toEqual([]);
  return { secret: created.secret!, id: created.apiKey!.id, actsAs: created.apiKey!.actsAs };
}

async function membershipId(owner: Browser, email: string): Promise<string> {
  const nodes = (await owner.graphql(MemberIds)).body.data!.viewer.members.nodes;
  return nodes.find((m) => m.user.email === email)!.id;
}

const rest = async (key: string, method: 'GET' | 'POST', path: string, body?: unknown) => {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};

const graphqlByKey = async (key: string, document: Parameters<typeof sourceOf>[0]) => {
  const res = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: sourceOf(document) }),
  });
  return { status: res.status, body: await res.json() };
};

const mcp = async (key: string, method: string, params: unknown) => {
  const res = await fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};

/** What each face answers for the ledger and a credit purchase with `key`. */
async function billingWith(key: string) {
  const ledger = await rest(key, 'GET', '/api/v1/wallet/ledger');
  const buy = await rest(key, 'POST', '/api/v1/buy-credits', { amount: 100 });
  const gqlLedger = await graphqlByKey(key, Ledger);
  const gqlBuy = await graphqlByKey(key, BuyCredits);
  const gqlStatement = await graphqlByKey(key, Statement);
  const gqlSpent = await graphqlByKey(key, Spent);
  return {
    rest: {
      ledger: ledger.status,
      buy: buy.status,
      code: ledger.body?.error?.code ?? null,
      message: ledger.body?.error?.message ?? null,
    },
    graphql: {
      ledger: gqlLedger.body.errors?.[0]?.extensions?.code ?? 'OK',
      statement: gqlStatement.body.errors?.[0]?.extensions?.code ?? 'OK',
      spent: gqlSpent.body.errors?.[0]?.extensions?.code ?? 'OK',
      buy: gqlBuy.body.data.buyCredits.userErrors[0]?.code ?? 'OK',
    },
  };
}

describe('keys act with their creator’s role', () => {
  it('an admin’s key cannot read the ledger or buy credits on REST or GraphQL, and says why; an owner’s key can', async () => {
    const { owner } = await team('owner1@example.com');
    const admin = await join(owner, 'admin1@example.com', 'ADMIN');
    const adminKey = await createKey(admin, 'admin’s');
    const ownerKey = await createKey(owner, 'owner’s');
    expect([adminKey.actsAs, ownerKey.actsAs]).toEqual(['ADMIN', 'OWNER']);

    const refused = await billingWith(adminKey.secret);
    expect(refused).toEqual({
      rest: {
        ledger: 403,
        buy: 403,
        code: 'role_required',
        message:
          'This key acts with the rights of its creator, an admin; billing (credits, ledger, plan) is for the account’s owners.',
      },
      graphql: { ledger: 'ROLE_REQUIRED', statement: 'ROLE_REQUIRED', spent: 'ROLE_REQUIRED', buy: 'ROLE_REQUIRED' },
    });
    const allowed = await billingWith(ownerKey.secret);
    expect(allowed).toMatchObject({
      rest: { ledger: 200, buy: 200 },
      graphql: { ledger: 'OK', statement: 'OK', spent: 'OK', buy: 'OK' },
    });

    // What an admin may do, the admin's key still does: webhooks, the wallet, and MCP (which has no billing tool).
    expect((await rest(adminKey.secret, 'GET', '/api/v1/webhooks')).status).toBe(200);
    expect((await rest(adminKey.secret, 'GET', '/api/v1/wallet')).status).toBe(200);
    const wallet = await mcp(adminKey.secret, 'tools/call', { name: 'get_wallet', arguments: {} });
    expect([wallet.status, wallet.body.result.isError ?? false]).toEqual([200, false]);
    // And no key manages keys.
    const more = await graphqlByKey(
      ownerKey.secret,
      `mutation { createApiKey(input: {name: "more"}) { secret userErrors { code message } } }`,
    );
    expect(more.body.data.createApiKey).toEqual({
      secret: null,
      userErrors: [
        {
          code: 'ROLE_REQUIRED',
          message:
            'API keys are managed by the account’s owners and admins, signed in to the console; an API key cannot.',
        },
      ],
    });
  });

  it('demoting the creator narrows their keys at once, and promoting widens them again', async () => {
    const { owner } = await team('owner2@example.com');
    const second = await join(owner, 'second2@example.com', 'OWNER');
    const key = await createKey(second, 'second’s');
    expect((await rest(key.secret, 'GET', '/api/v1/wallet/ledger')).status).toBe(200);
    const id = await membershipId(owner, 'second2@example.com');
    const change = async (role: Role) =>
      expect(
        (await owner.graphql(ChangeRole, { input: { membershipId: id, role } })).body.data!.changeMemberRole.userErrors,
      ).toEqual([]);

    await change('ADMIN');
    expect((await billingWith(key.secret)).rest).toMatchObject({ ledger: 403, buy: 403, code: 'role_required' });
    expect((await graphqlByKey(key.secret, Ledger)).body.errors[0].extensions.code).toBe('ROLE_REQUIRED');
    expect((await rest(key.secret, 'GET', '/api/v1/webhooks')).status).toBe(200);
    await change('MEMBER');
    const webhooks = await rest(key.secret, 'GET', '/api/v1/webhooks');
    expect(webhooks).toMatchObject({
      status: 403,
      body: {
        error: {
          code: 'role_required',
          message:
            'This key acts with the rights of its creator, a member; webhooks are managed by the account’s owners and admins.',
        },
      },
    });
    // A member’s key still reads the wallet, as a member does.
    expect((await rest(key.secret, 'GET', '/api/v1/wallet')).status).toBe(200);
    const listed = (await owner.graphql(Keys)).body.data!.viewer.apiKeys.nodes.find((k) => k.id === key.id);
    expect(listed).toMatchObject({
      actsAs: 'MEMBER',
      revokedAt: null,
      revokedReason: null,
      createdBy: { email: 'second2@example.com', name: 'second2' },
    });

    await change('OWNER');
    expect((await rest(key.secret, 'GET', '/api/v1/wallet/ledger')).status).toBe(200);
  });
});

describe('a creator leaving the account revokes their keys', () => {
  it('removing the creator revokes their keys on REST, GraphQL and MCP; the key list says why', async () => {
    const { owner } = await team('owner3@example.com');
    const admin = await join(owner, 'admin3@example.com', 'ADMIN');
    const first = await createKey(admin, 'first');
    const second = await createKey(admin, 'second');
    const ownerKey = await createKey(owner, 'owner’s');
    const byHand = await createKey(owner, 'by hand');
    expect((await owner.graphql(RevokeKey, { id: byHand.id })).body.data!.revokeApiKey).toEqual({
      apiKey: { actsAs: null, revokedReason: 'REVOKED' },
      userErrors: [],
    });
    expect((await rest(first.secret, 'GET', '/api/v1/wallet')).status).toBe(200);
    expect((await mcp(first.secret, 'tools/list', {})).status).toBe(200);

    const removed = await owner.graphql(RemoveMember, { id: await membershipId(owner, 'admin3@example.com') });
    expect(removed.body.data!.removeMember).toMatchObject({ revokedKeyCount: 2, userErrors: [] });

    for (const key of [first, second]) {
      expect(await rest(key.secret, 'GET', '/api/v1/wallet')).toMatchObject({
        status: 401,
        body: { error: { code: 'unauthenticated' } },
      });
      expect((await graphqlByKey(key.secret, ViewerId)).status).toBe(401);
      expect((await mcp(key.secret, 'tools/list', {})).status).toBe(401);
    }
    expect((await rest(ownerKey.secret, 'GET', '/api/v1/wallet/ledger')).status).toBe(200);

    const keys = (await owner.graphql(Keys)).body.data!.viewer.apiKeys.nodes;
    const state = Object.fromEntries(
      keys.map((k) => [
        k.name,
        { actsAs: k.actsAs, revokedReason: k.revokedReason, creator: k.createdBy?.email ?? null },
      ]),
    );
    expect(state).toEqual({
      first: { actsAs: null, revokedReason: 'CREATOR_REMOVED', creator: 'admin3@example.com' },
      second: { actsAs: null, revokedReason: 'CREATOR_REMOVED', creator: 'admin3@example.com' },
      'owner’s': { actsAs: 'OWNER', revokedReason: null, creator: 'owner3@example.com' },
      'by hand': { actsAs: null, revokedReason: 'REVOKED', creator: 'owner3@example.com' },
    });
    const stored = await t.app.core
      .sql`select revoked_reason from api_key where id in (${first.id}, ${second.id}) and revoked_at is not null`;
    expect(stored.map((r) => r.revoked_reason)).toEqual(['creator_removed', 'creator_removed']);
  });

  it('a member who leaves the account themselves takes their keys with them', async () => {
    const { owner } = await team('owner4@example.com');
    const admin = await join(owner, 'admin4@example.com', 'ADMIN');
    const key = await createKey(admin, 'mine');
    const left = await admin.graphql(RemoveMember, { id: await membershipId(admin, 'admin4@example.com') });
    expect(left.body.data!.removeMember).toMatchObject({ revokedKeyCount: 1, userErrors: [] });
    expect((await rest(key.secret, 'GET', '/api/v1/wallet')).status).toBe(401);
    expect(
      (await owner.graphql(Keys)).body.data!.viewer.apiKeys.nodes.find((k) => k.id === key.id)!.revokedReason,
    ).toBe('CREATOR_REMOVED');
  });

  it('refuses a key whose creator is no longer a member, even when the key was not revoked', async () => {
    const { owner, accountId } = await team('owner5@example.com');
    const admin = await join(owner, 'admin5@example.com', 'ADMIN');
    const key = await createKey(admin, 'orphan');
    await t.app.core
      .sql`delete from membership where account_id = ${accountId} and user_id = (select id from app_user where email = 'admin5@example.com')`;
    expect(await rest(key.secret, 'GET', '/api/v1/wallet')).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthenticated' } },
    });
    expect((await mcp(key.secret, 'tools/list', {})).status).toBe(401);
  });
});

describe('operator keys', () => {
  it('a key made by the operator (the CLI) has no creator and keeps billing and webhooks, but still manages no keys', async () => {
    const { owner, accountId } = await team('owner6@example.com');
    const { apiKey, keyId } = await createApiKey(t.app.core.db, accountId);
    expect(await billingWith(apiKey)).toMatchObject({
      rest: { ledger: 200, buy: 200 },
      graphql: { ledger: 'OK', buy: 'OK' },
    });
    expect((await rest(apiKey, 'GET', '/api/v1/webhooks')).status).toBe(200);
    const keys = await graphqlByKey(apiKey, `{ viewer { apiKeys { totalCount } } }`);
    expect(keys.body.errors[0].extensions.code).toBe('ROLE_REQUIRED');
    const listed = (await owner.graphql(Keys)).body.data!.viewer.apiKeys.nodes.find((k) => k.id === keyId);
    expect(listed).toMatchObject({ actsAs: null, createdBy: null, revokedReason: null });
  });
});

describe('the console’s key list', () => {
  it('shows who created each key, with which rights it acts, and that a key was revoked because its creator left', {
    timeout: 120_000,
  }, async () => {
    const { owner, accountId } = await team('owner7@example.com');
    const admin = await join(owner, 'admin7@example.com', 'ADMIN');
    await createKey(owner, 'deploy');
    await createKey(admin, 'reports');
    await createApiKey(t.app.core.db, accountId);
    await owner.graphql(RemoveMember, { id: await membershipId(owner, 'admin7@example.com') });

    const ui = await launchConsoleBrowser(t.url);
    try {
      const page = await ui.newPage();
      await page.context().addCookies([{ name: 'lg_session', value: owner.cookie!, url: t.url }]);
      await page.goto('/keys');
      const table = page.getByRole('table', { name: 'API keys' });
      const row = (name: string) =>
        table.getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) });
      await visible(row('deploy').getByRole('cell', { name: 'owner (owner7)', exact: true }));
      await visible(row('reports').getByText(/^Revoked: its creator left the account/));
      await visible(row('API key').getByRole('cell', { name: 'Operator key: every key right', exact: true }));
      await audit(page);
      expect(ui.offOrigin).toEqual([]);
    } finally {
      await ui.close();
    }
  });
});
