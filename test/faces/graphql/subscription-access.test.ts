import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import { grantPlanCredits } from '../../../src/billing/wallet.ts';
import { LiveAccess } from '../../../src/http/access.ts';
import { startTestApp } from '../../helpers/app.ts';
import { startIdentityApp, type Browser, type IdentityApp } from '../../helpers/identity.ts';
import { runGates, type GatedSources, type RunGates } from '../../helpers/sources.ts';
import { waitFor } from '../../helpers/wait.ts';
import { closeCode, disposeClients, wsClient } from '../../helpers/ws.ts';
import { graphql } from '../../helpers/gql/index.ts';

/**
 * An open subscription delivers its events only while the access it was opened with lasts: on every
 * subscription (runProgress, shared between subscribers; runItems; runEvents), for every way access
 * ends (key revoked, key expired, member removed, session signed out, sign-out everywhere), the socket
 * receives no event once access has ended and is closed with 4401 without sending anything. A role
 * change reaches the principal the events resolve with.
 */

const PASSWORD = 'correct horse battery';
let t: IdentityApp;
let gates: RunGates;
/** The gate of the test's held run. */
let gate: GatedSources | undefined;

beforeAll(async () => {
  t = await startIdentityApp({}, { worker: true });
  gates = runGates(t.app.core);
});
afterEach(async () => {
  gates.reset();
  gate = undefined;
  await disposeClients();
});
afterAll(() => t?.stop());

const CreateKey = graphql(
  `mutation SubscriptionAccessCreateKey { createApiKey(input: {name: "dashboard"}) { secret apiKey { id prefix } userErrors { code } } }`,
);
const RevokeKey = graphql(
  `mutation SubscriptionAccessRevokeKey($id: ID!) { revokeApiKey(id: $id) { apiKey { revokedAt } userErrors { code } } }`,
);
const Invite = graphql(
  `mutation SubscriptionAccessInvite($input: InviteMemberInput!) { inviteMember(input: $input) { userErrors { code } } }`,
);
const MemberIds = graphql(`query SubscriptionAccessMemberIds { viewer { members { nodes { id user { email } } } } }`);
const RemoveMember = graphql(
  `mutation SubscriptionAccessRemove($id: ID!) { removeMember(id: $id) { removedMembershipId userErrors { code } } }`,
);
const ChangeRole = graphql(
  `mutation SubscriptionAccessChangeRole($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { membership { role } userErrors { code } } }`,
);
const SignOutEverywhere = graphql(
  `mutation SubscriptionAccessSignOutEverywhere { signOutEverywhere { revokedSessionCount userErrors { code } } }`,
);

const SUBSCRIPTIONS = {
  runProgress: 'subscription SubscriptionAccessProgress($id: ID!) { runProgress(id: $id) { id status handled } }',
  runItems:
    'subscription SubscriptionAccessItems($id: ID!) { runItems(id: $id) { offset run { id handled downloadUrl(format: CSV) } } }',
  runEvents: 'subscription SubscriptionAccessEvents { runEvents { kind run { id handled downloadUrl(format: CSV) } } }',
} as const;
type SubscriptionName = keyof typeof SUBSCRIPTIONS;

interface Team {
  owner: Browser;
  ownerKey: string;
  member: Browser;
  memberEmail: string;
}

let teams = 0;
/** An owner with credits and a key to start runs, and a member (admin) who joined by invitation. */
async function team(): Promise<Team> {
  const n = ++teams;
  const owner = await t.signUp(`owner${n}@access.example.com`);
  const accountId = (await owner.request('GET', '/auth/session')).body.account.id as string;
  await grantPlanCredits(t.app.core.db, accountId, 100_000_000n, 'test credits');
  const created = await owner.graphql(CreateKey);
  const memberEmail = `member${n}@access.example.com`;
  const from = t.mail.mails.length;
  expect(
    (await owner.graphql(Invite, { input: { email: memberEmail, role: 'ADMIN' } })).body.data!.inviteMember.userErrors,
  ).toEqual([]);
  const link = await t.mail.linkTo(memberEmail, '/invitations/', from);
  const member = t.browser();
  const accepted = await member.request('POST', '/auth/invitations/accept', {
    body: { token: link.split('/invitations/')[1], password: PASSWORD, name: 'member' },
  });
  expect(accepted.status).toBe(200);
  return { owner, ownerKey: created.body.data!.createApiKey.secret!, member, memberEmail };
}

/** A maps run of the team, held before each page until the test lets it go on. */
async function heldRun(ownerKey: string): Promise<string> {
  gate = gates.hold();
  const res = await fetch(`${t.url}/api/v1/scrape/maps`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ownerKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      searchStringsArray: ['dentist', 'plumber', 'bakery', 'florist'],
      maxCrawledPlacesPerSearch: 100,
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { runId: string }).runId;
}

interface Watched {
  events: unknown[];
  errors: unknown[];
  closed: Promise<number>;
}

/** Subscribes `client` and records what arrives, and how its socket closes. */
function watch(client: Client, name: SubscriptionName, runId: string): Watched {
  const watched: Watched = { events: [], errors: [], closed: closeCode(client) };
  client.subscribe(
    { query: SUBSCRIPTIONS[name], variables: name === 'runEvents' ? {} : { id: runId } },
    { next: (result) => watched.events.push(result), error: (err) => watched.errors.push(err), complete: () => {} },
  );
  return watched;
}

type Ending = 'key revoked' | 'key expired' | 'member removed' | 'session signed out' | 'signed out everywhere';
const KEY_ENDINGS: Ending[] = ['key revoked', 'key expired'];
const SESSION_ENDINGS: Ending[] = ['member removed', 'session signed out', 'signed out everywhere'];

/** Opens the subscriber's socket: a key the owner created in the console, or the member's session. */
async function subscriber(
  team: Team,
  ending: Ending,
  options: { lazy?: boolean; onNonLazyError?: () => void } = {},
): Promise<{ client: Client; end: () => Promise<void> }> {
  if (KEY_ENDINGS.includes(ending)) {
    const created = (await team.owner.graphql(CreateKey)).body.data!.createApiKey;
    const client = wsClient(t.url, created.secret!, options);
    const end =
      ending === 'key revoked'
        ? async () =>
            void expect(
              (await team.owner.graphql(RevokeKey, { id: created.apiKey!.id })).body.data!.revokeApiKey.userErrors,
            ).toEqual([])
        : async () =>
            void (await t.app.core
              .sql`update api_key set expires_at = now() - interval '1 second' where id = ${created.apiKey!.id}`);
    return { client, end };
  }
  const client = team.member.socket();
  const end = {
    'member removed': async () => {
      const id = (await team.owner.graphql(MemberIds)).body.data!.viewer.members.nodes.find(
        (m) => m.user.email === team.memberEmail,
      )!.id;
      expect((await team.owner.graphql(RemoveMember, { id })).body.data!.removeMember.userErrors).toEqual([]);
    },
    'session signed out': async () => expect((await team.member.request('POST', '/auth/sign-out')).status).toBe(204),
    'signed out everywhere': async () =>
      void expect((await team.member.graphql(SignOutEverywhere)).body.data!.signOutEverywhere.userErrors).toEqual([]),
  }[ending as 'member removed'];
  return { client, end };
}

describe('an open subscription ends with the access it was opened with', () => {
  for (const name of Object.keys(SUBSCRIPTIONS) as SubscriptionName[]) {
    for (const ending of [...KEY_ENDINGS, ...SESSION_ENDINGS]) {
      it(`${name}: ${ending}: no event after it, and the socket is closed with 4401 unasked`, async () => {
        const crew = await team();
        const runId = await heldRun(crew.ownerKey);
        const { client, end } = await subscriber(crew, ending);
        const watched = watch(client, name, runId);
        // runItems has nothing to send before the first page: wait for the subscription to be in place another way.
        if (name === 'runItems') {
          gate!.release(0);
          await waitFor(
            () => watched.events.length,
            (n) => n > 0,
            { what: 'the first batch of rows' },
          );
        } else
          await waitFor(
            () => watched.events.length,
            (n) => n > 0,
            { what: 'the first event' },
          );

        await end();
        const seenAtEnd = watched.events.length;
        // The run goes on, so events follow at once: none may reach the socket.
        gate!.releaseAll();
        expect(await watched.closed).toBe(4401);
        expect(watched.events.length).toBe(seenAtEnd);
        // The run did go on (the events were there to be withheld).
        await waitFor(
          async () => (await t.app.core.sql`select handled from run where id = ${runId}`)[0]!.handled as number,
          (h) => h > 0,
          { what: 'the run to go on' },
        );
      });
    }
  }

  it('closes an idle socket, subscribed to nothing, once its key is revoked', async () => {
    const crew = await team();
    // Not lazy: the socket stays open with nothing to follow.
    const { client, end } = await subscriber(crew, 'key revoked', { lazy: false, onNonLazyError: () => {} });
    const closed = closeCode(client);
    // A query makes the socket connect; nothing is sent after it.
    await new Promise<void>((resolve, reject) =>
      client.subscribe({ query: '{ viewer { id } }' }, { next: () => {}, error: reject, complete: resolve }),
    );
    await end();
    expect(await closed).toBe(4401);
  });

  it('a shared runProgress goes on for the subscribers whose access lasts', async () => {
    const crew = await team();
    const runId = await heldRun(crew.ownerKey);
    const lasting = watch(wsClient(t.url, crew.ownerKey), 'runProgress', runId);
    const { client, end } = await subscriber(crew, 'key revoked');
    const ended = watch(client, 'runProgress', runId);
    await waitFor(
      () => [lasting.events.length, ended.events.length],
      ([a, b]) => a! > 0 && b! > 0,
      { what: 'both subscribers’ first event' },
    );
    await end();
    expect(await ended.closed).toBe(4401);
    gate!.releaseAll();
    await waitFor(
      () => lasting.events.at(-1) as { data?: { runProgress?: { status: string } } } | undefined,
      (e) => e?.data?.runProgress?.status === 'SUCCEEDED',
      { what: 'the run’s end on the lasting socket' },
    );
    expect(lasting.errors).toEqual([]);
  });
});

describe('the principal events resolve with', () => {
  it('follows a role change: a member demoted is read as a member at the next check', async () => {
    const crew = await team();
    const credential = { session: { token: crew.member.cookie!, csrfToken: crew.member.csrfToken } };
    const principal = await t.app.core.auth.authenticateSession(credential.session.token, credential.session.csrfToken);
    expect(principal.role).toBe('admin');
    const access = new LiveAccess(t.app.core, credential, principal);
    const id = (await crew.owner.graphql(MemberIds)).body.data!.viewer.members.nodes.find(
      (m) => m.user.email === crew.memberEmail,
    )!.id;
    expect(
      (await crew.owner.graphql(ChangeRole, { input: { membershipId: id, role: 'MEMBER' } })).body.data!
        .changeMemberRole.userErrors,
    ).toEqual([]);
    const held = access.principal;
    expect(await access.confirm()).toBe(held);
    // The same object, changed in place: every context holding it reads the new role.
    expect(held.role).toBe('member');
  });

  it('over HTTP (server-sent events) a subscription also stops when its key is revoked', async () => {
    const crew = await team();
    const runId = await heldRun(crew.ownerKey);
    const created = (await crew.owner.graphql(CreateKey)).body.data!.createApiKey;
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${created.secret}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: JSON.stringify({ query: SUBSCRIPTIONS.runProgress, variables: { id: runId } }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    const read = async (until: (text: string) => boolean) => {
      while (!until(text)) {
        const chunk = await reader.read();
        if (chunk.done) return true;
        text += new TextDecoder().decode(chunk.value);
      }
      return false;
    };
    await read((s) => s.includes('"runProgress"'));
    expect(
      (await crew.owner.graphql(RevokeKey, { id: created.apiKey!.id })).body.data!.revokeApiKey.userErrors,
    ).toEqual([]);
    const before = text.split('"runProgress"').length;
    gate!.releaseAll();
    // The stream ends with the refusal, and no progress after the revocation.
    expect(await read(() => false)).toBe(true);
    expect(text.split('"runProgress"').length).toBe(before);
    expect(text).toContain('UNAUTHENTICATED');
  });
});

describe('opening a socket is a request, and sockets are capped', () => {
  /** A socket that connects at once and stays open: resolves with its close code, or 'open' once acknowledged. */
  const connect = (url: string, key: string) => {
    const client = wsClient(url, key, { lazy: false, onNonLazyError: () => {} });
    return new Promise<number | 'open'>((resolve) => {
      client.on('connected', () => resolve('open'));
      client.on('closed', (event) => resolve((event as { code: number }).code));
    });
  };

  it('connection_init counts against the key’s requests a minute: past them the socket is closed with 4429', async () => {
    const app = await startTestApp({ worker: false, config: { rateLimitPerMinute: 3 } });
    try {
      const { apiKey } = await app.account();
      const opened = [];
      for (let i = 0; i < 4; i++) opened.push(await connect(app.url, apiKey));
      expect(opened).toEqual(['open', 'open', 'open', 4429]);
    } finally {
      await disposeClients();
      await app.stop();
    }
  });

  it('the 301st open socket of a key is closed with 4429; another key’s opens', async () => {
    const app = await startTestApp({ worker: false });
    try {
      const { apiKey } = await app.account();
      const opened = await Promise.all(Array.from({ length: 300 }, () => connect(app.url, apiKey)));
      expect(opened.every((o) => o === 'open')).toBe(true);
      expect(await connect(app.url, apiKey)).toBe(4429);
      // Another key of the same address is not held back by this one's sockets.
      expect(await connect(app.url, (await app.account()).apiKey)).toBe('open');
    } finally {
      await disposeClients();
      await app.stop();
    }
  });

  it('a client address holds at most WS_MAX_SOCKETS_PER_ADDRESS sockets, whatever keys they use', async () => {
    const app = await startTestApp({ worker: false, config: { wsMaxSocketsPerAddress: 3 } });
    try {
      const keys = await Promise.all([app.account(), app.account(), app.account(), app.account()]);
      const opened = [];
      for (const { apiKey } of keys) opened.push(await connect(app.url, apiKey));
      expect(opened).toEqual(['open', 'open', 'open', 4429]);
    } finally {
      await disposeClients();
      await app.stop();
    }
  });
});
