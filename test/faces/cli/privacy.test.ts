import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { leadgate } from '../../helpers/process.ts';

/**
 * `npx leadgate privacy erase | access | receipts`: the operator's requests of people from a shell, each
 * printing its receipt, which names the person only by keyed hashes.
 */

let t: TestApp;
let env: Record<string, string>;
let dir: string;
let person: { id: number; email: string };

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  env = { DATABASE_URL: t.database.url, LOG_LEVEL: 'warn' };
  dir = await mkdtemp(path.join(tmpdir(), 'cli-privacy-'));
  [person] = (await t.app.core
    .sql`select id::int, email from person where email is not null order by id limit 1`) as unknown as [typeof person];
});
afterAll(async () => {
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npx leadgate privacy', () => {
  it('access writes what is held to a file only its owner reads, and prints the receipt', async () => {
    const out = path.join(dir, 'access.json');
    const done = await leadgate(['privacy', 'access', '--email', person.email.toUpperCase(), '--out', out], env);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/^access prq_\w+ at .+, requested by operator\n {2}held: 1 person/);
    expect(done.stdout).not.toContain(person.email);
    const file = JSON.parse(await readFile(out, 'utf8'));
    expect(file.data.catalog.people[0]).toMatchObject({ id: person.id, email: person.email });
    expect(file.receipt.kind).toBe('access');
    expect((await stat(out)).mode & 0o777).toBe(0o600);
  });

  it('erase removes the person and prints the receipt; a bad identifier changes nothing', async () => {
    const bad = await leadgate(['privacy', 'erase', '--email', person.email, '--phone', 'call me'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--phone call me: must be a phone number');
    expect(bad.stderr).toContain('nothing was done');
    const none = await leadgate(['privacy', 'erase'], env);
    expect(none.stderr).toContain('name the person with --email or --phone');

    const done = await leadgate(['privacy', 'erase', '--email', person.email, '--note', 'ticket 7'], env);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/^erasure prq_\w+ at .+, requested by operator: ticket 7\n {2}removed: 1 person/);
    expect(done.stdout).toContain('identifiers (keyed hashes): email ');
    expect(done.stdout).not.toContain(person.email);
    const [left] = await t.app.core.sql`select count(*)::int as n from person where id = ${person.id}`;
    expect(left?.n).toBe(0);
    const [listed] = await t.app.core.sql`select count(*)::int as n from suppression where source = 'erasure'`;
    expect(listed?.n).toBe(1);
  });

  it('receipts lists them newest first', async () => {
    const listed = await leadgate(['privacy', 'receipts', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const receipts = listed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(receipts.map((r: { kind: string }) => r.kind)).toEqual(['erasure', 'access']);
    expect(receipts[0]).toMatchObject({ note: 'ticket 7', counts: { people: 1 } });
    const words = await leadgate(['privacy', 'receipts', '--limit', '1'], env);
    expect(words.stdout.match(/^\w+ prq_/gm)).toEqual(['erasure prq_']);
  });
});
