import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_RETENTION_DAYS } from '../../db/tables/audit.ts';
import { OPERATOR, personHash, purgeExpiredAuditEvents, recordAudit, SYSTEM } from '../../src/audit/audit.ts';
import { openDirectDb, type DirectDb } from '../helpers/direct-db.ts';

/**
 * The audit log is append-only in the database itself: the trigger of its migration refuses every
 * UPDATE, every TRUNCATE and every DELETE of an event younger than AUDIT_RETENTION_DAYS, whoever sends
 * it; the hourly purge deletes only what is past that. An event written in a transaction that rolls
 * back is gone with it.
 */

let d: DirectDb;
let accountId: string;

beforeAll(async () => {
  d = await openDirectDb();
  accountId = await d.account();
});
afterAll(() => d?.close());

const DAY_MS = 24 * 3600_000;

/** An event of the account written at `at`. */
const event = async (at?: Date) =>
  String(
    await recordAudit(d.db, {
      accountId,
      actor: SYSTEM,
      action: 'connection.broken',
      target: { type: 'connection', id: 'con_test', label: 'Team chat' },
      details: { provider: 'slack', reason: 'revoked' },
      ...(at ? { at } : {}),
    }),
  );

describe('the trigger', () => {
  it('refuses an UPDATE and a DELETE of an event, and a TRUNCATE of the log', async () => {
    const id = await event();
    await expect(d.sql`update audit_event set actor_label = 'someone else' where id = ${id}`).rejects.toThrow(
      /audit_event is append-only: UPDATE refused/,
    );
    await expect(d.sql`delete from audit_event where id = ${id}`).rejects.toThrow(
      /audit_event is append-only: DELETE refused/,
    );
    await expect(d.sql`truncate audit_event`).rejects.toThrow(/audit_event is append-only: TRUNCATE refused/);
    const [kept] = await d.sql`select actor_label, details from audit_event where id = ${id}`;
    expect(kept).toEqual({ actor_label: 'leadgate', details: { provider: 'slack', reason: 'revoked' } });
  });

  it(`lets an event go only once it is older than ${AUDIT_RETENTION_DAYS} days, the period the code states`, async () => {
    const now = Date.now();
    const young = await event(new Date(now - (AUDIT_RETENTION_DAYS - 1) * DAY_MS));
    const old = await event(new Date(now - (AUDIT_RETENTION_DAYS + 1) * DAY_MS));
    await expect(d.sql`delete from audit_event where id = ${young}`).rejects.toThrow(/append-only/);
    expect((await d.sql`delete from audit_event where id = ${old} returning id`).length).toBe(1);
  });

  it('the purge deletes the events past the period and keeps the others', async () => {
    const now = Date.now();
    const past = [await event(new Date(now - 800 * DAY_MS)), await event(new Date(now - 731 * DAY_MS))];
    const kept = await event(new Date(now - 400 * DAY_MS));
    expect(await purgeExpiredAuditEvents(d.db)).toBe(2);
    const left = await d.sql`select id from audit_event where id = any(${[...past, kept]}::bigint[])`;
    expect(left.map((r) => String(r.id))).toEqual([kept]);
    expect(await purgeExpiredAuditEvents(d.db)).toBe(0);
  });
});

describe('recording', () => {
  it('an event written in a transaction that rolls back is gone with the action', async () => {
    const before = await d.sql`select count(*)::int as n from audit_event`;
    await expect(
      d.db.transaction(async (tx) => {
        await recordAudit(tx, {
          accountId: null,
          actor: OPERATOR,
          action: 'privacy.erasure',
          target: { type: 'privacy_request', id: 'prq_test' },
          details: { kind: 'email', personHash: 'x', catalogRows: 1, runRows: 0, datasetIdentities: 0 },
        });
        throw new Error('the erasure failed');
      }),
    ).rejects.toThrow('the erasure failed');
    expect(await d.sql`select count(*)::int as n from audit_event`).toEqual(before);
  });

  it('an operator’s event belongs to no account and is labelled as the operator', async () => {
    const id = String(
      await recordAudit(d.db, {
        accountId: null,
        actor: OPERATOR,
        action: 'privacy.drop_cycle',
        target: { type: 'drop_cycle', id: 'drc_1', label: 'drop-2026-08-01.zip' },
        details: {
          fileName: 'drop-2026-08-01.zip',
          workItems: 3,
          deleted: 1,
          optedOut: 1,
          exempted: 0,
          notFound: 1,
          recordsDeleted: 2,
        },
      }),
    );
    const [row] = await d.sql`select account_id, actor_type, actor_id, actor_label from audit_event where id = ${id}`;
    expect(row).toEqual({ account_id: null, actor_type: 'operator', actor_id: null, actor_label: 'Operator' });
  });

  it('a person’s hash is keyed and stable: the same for the same identifier, nothing a dictionary finds', () => {
    const secret = Buffer.alloc(32, 7);
    const hash = personHash(secret, 'email', 'jane@acme.com');
    expect(hash).toBe(personHash(secret, 'email', 'jane@acme.com'));
    expect(hash).not.toBe(personHash(Buffer.alloc(32, 8), 'email', 'jane@acme.com'));
    expect(hash).not.toBe(personHash(secret, 'phone', 'jane@acme.com'));
    expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
