import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFixture, type ImportFixture } from '../../helpers/import.ts';
import { leadgate, spawnService, type Service } from '../../helpers/process.ts';
import { waitFor as waitUntil } from '../../helpers/wait.ts';

let f: ImportFixture;
let env: Record<string, string>;

beforeAll(async () => {
  f = await importFixture();
  env = { DATABASE_URL: f.database.url, LOG_LEVEL: 'warn' };
});
afterAll(() => f?.close());

const GOOD_CSV = [
  'domain,name,keywords,founded',
  'cli-one-import.test,One,"a; b",1990',
  'cli-two-import.test,Two,,',
].join('\n');
const BAD_CSV = [
  'domain,name,founded',
  'cli-three-import.test,Three,1991',
  'cli four,Four,',
  'cli-five-import.test,,later',
].join('\n');
const BAD_LINES = [
  'line 3: domain: "cli four" is not a lower-case host name such as acme.com',
  'line 4: name: required; founded: expected a whole number, got "later"',
];

/** Polls `check` until it returns a value (state-based; the deadline is only a safety net). */
const waitFor = async <T>(check: () => Promise<T | undefined>, what: string): Promise<T> =>
  (await waitUntil(check, (value) => value !== undefined, { timeoutMs: 60_000, intervalMs: 50, what }))!;

function startImport(args: string[]): { child: Service; output: { readonly stdout: string; readonly stderr: string } } {
  const child = spawnService(['src/cli/leadgate.mjs', 'import', ...args], env);
  return {
    child,
    output: {
      get stdout() {
        return child.stdout();
      },
      get stderr() {
        return child.stderr();
      },
    },
  };
}

/**
 * Holds a SHARE lock on `company` so an import gets through reading, staging and checks, then
 * waits at its INSERT; resolves with the waiting backend's pid.
 */
async function importBlockedAtApply(args: string[]) {
  const holder = await f.sql.reserve();
  await holder`begin`;
  await holder`lock table company in share mode`;
  const started = startImport(args);
  const pid = await waitFor(async () => {
    const [row] = await f.sql<{ pid: number }[]>`
      select pid from pg_stat_activity
      where application_name = 'leadgate' and datname = current_database() and wait_event_type = 'Lock' and query like 'with applied as%'`;
    return row?.pid;
  }, 'the import to wait at its INSERT');
  const release = async () => {
    await holder`rollback`;
    holder.release();
  };
  return { ...started, pid, release };
}

describe('npx leadgate import', () => {
  it('imports a good file and prints the summary as JSON', async () => {
    const file = await f.write('cli-good.csv', GOOD_CSV);
    const out = await leadgate(['import', 'companies', file], env);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({
      dataset: 'companies',
      rows: 2,
      inserted: 2,
      updated: 0,
      unchanged: 0,
      invalid: 0,
      duplicatesInFile: 0,
      suppressed: 0,
    });
    expect(
      await f.sql`select domain, name, keywords, founded from company where domain like 'cli-%' order by domain`,
    ).toEqual([
      { domain: 'cli-one-import.test', name: 'One', keywords: ['a', 'b'], founded: 1990 },
      { domain: 'cli-two-import.test', name: 'Two', keywords: [], founded: null },
    ]);

    const again = await leadgate(['import', 'companies', file], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 2, inserted: 0, updated: 0, unchanged: 2 });
  });

  it('refuses a bad file: each bad row on stderr and in the errors file, nothing loaded, exit code 1', async () => {
    const file = await f.write('cli-bad.csv', BAD_CSV);
    const before = await f.checksum('company');
    const out = await leadgate(['import', 'companies', file], env);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toBe(
      `${BAD_LINES.join('\n')}\nerror: 2 invalid rows; nothing was loaded (see ${file}.errors.csv)\n`,
    );
    expect(await f.errorsIn(`${file}.errors.csv`)).toEqual([
      { line: '3', reason: 'domain: "cli four" is not a lower-case host name such as acme.com' },
      { line: '4', reason: 'name: required; founded: expected a whole number, got "later"' },
    ]);
    expect(await f.checksum('company')).toEqual(before);
    expect(await f.state('companies')).toEqual({ ready: true, row_count: before.rows });

    const header = await f.write('cli-header.csv', 'domain,title\nx.test,y\n');
    const refused = await leadgate(['import', 'companies', header], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `line 1: unknown columns: title; missing required columns: name\nerror: the file was refused (line 1); nothing was loaded (see ${header}.errors.csv)\n`,
    );

    const unknown = await leadgate(['import', 'planets', file], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/'planets' is invalid for argument 'dataset'/);
  });

  it('--skip-invalid loads the good rows and reports the bad ones; --errors chooses the errors file', async () => {
    const file = await f.write('cli-bad.csv', BAD_CSV);
    const errors = `${f.dir}/cli-rejects.csv`;
    const out = await leadgate(['import', 'companies', file, '--skip-invalid', '--errors', errors], env);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({
      dataset: 'companies',
      rows: 3,
      inserted: 1,
      updated: 0,
      unchanged: 0,
      invalid: 2,
      duplicatesInFile: 0,
      suppressed: 0,
    });
    expect(out.stderr).toBe(`${BAD_LINES.join('\n')}\n2 invalid rows skipped (see ${errors})\n`);
    expect((await f.errorsIn(errors)).map((e) => e.line)).toEqual(['3', '4']);
    expect(await f.sql`select name from company where domain = 'cli-three-import.test'`).toEqual([{ name: 'Three' }]);
  });

  it('imports NDJSON', async () => {
    const file = await f.write(
      'cli-hosts.ndjson',
      `${JSON.stringify({ host_key: 'https://cli-import.test/u/1', name: 'Ann', is_pro: true })}\n`,
    );
    const out = await leadgate(['import', 'rental_hosts', file], env);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({
      dataset: 'rental_hosts',
      rows: 1,
      inserted: 1,
      updated: 0,
      unchanged: 0,
      invalid: 0,
      duplicatesInFile: 0,
      suppressed: 0,
    });
    expect(await f.sql`select name, is_pro from rental_host where host_key = 'https://cli-import.test/u/1'`).toEqual([
      { name: 'Ann', is_pro: true },
    ]);
  });

  it('an import killed with SIGKILL mid-import loads nothing; the next import makes the dataset ready again', async () => {
    const file = await f.write(
      'cli-kill.csv',
      ['domain,name', 'cli-killed-import.test,Killed', 'cli-one-import.test,Renamed'].join('\n'),
    );
    const before = await f.checksum('company');
    const blocked = await importBlockedAtApply(['companies', file]);
    expect(await f.state('companies')).toMatchObject({ ready: false });
    blocked.child.kill('SIGKILL');
    expect(await blocked.child.exited()).toBe(null);
    await blocked.release();
    await waitFor(
      async () =>
        (
          await f.sql`select 1 from pg_stat_activity where application_name = 'leadgate' and datname = current_database()`
        ).length === 0
          ? true
          : undefined,
      "the killed import's sessions to end",
    );

    expect(await f.checksum('company')).toEqual(before);
    expect(await f.sql`select count(*)::int as n from pg_class where relname = 'leadgate_import_staging'`).toEqual([
      { n: 0 },
    ]);
    expect(await f.state('companies')).toMatchObject({ ready: false });

    const out = await leadgate(['import', 'companies', await f.write('cli-good.csv', GOOD_CSV)], env);
    expect(out.code).toBe(0);
    expect(await f.state('companies')).toEqual({ ready: true, row_count: (await f.checksum('company')).rows });
  });

  it('Ctrl-C (SIGINT) mid-import rolls back, marks the dataset ready and exits 1', async () => {
    const file = await f.write(
      'cli-interrupt.csv',
      ['domain,name', 'cli-interrupted-import.test,Interrupted', 'cli-one-import.test,Renamed'].join('\n'),
    );
    const before = await f.checksum('company');
    const blocked = await importBlockedAtApply(['companies', file]);
    blocked.child.kill('SIGINT');
    const code = await blocked.child.exited();
    await blocked.release();
    expect(code).toBe(1);
    expect(blocked.output.stdout).toBe('');
    expect(blocked.output.stderr).toBe(
      '\ninterrupted: rolling back (interrupt again to quit at once)\nerror: import interrupted; nothing was loaded\n',
    );
    expect(await f.checksum('company')).toEqual(before);
    expect(await f.state('companies')).toEqual({ ready: true, row_count: before.rows });
  });
  it('a first load killed with SIGKILL halfway through its copy, or Ctrl-C then, leaves the table empty with its indexes and constraints', async () => {
    await f.sql`truncate person restart identity cascade`;
    const [company] = await f.sql<{ domain: string }[]>`select domain from company order by id limit 1`;
    const lines = ['company_domain,first_name,last_name,email,title,city'];
    for (let i = 1; i <= 150_000; i++)
      lines.push(`${company!.domain},First${i},Last${i},first.${i}@cli-first-load.test,Head of Sales,Denver`);
    const file = await f.write('cli-first-load.csv', `${lines.join('\n')}\n`);
    const shape = () =>
      f.sql`select (select json_agg(indexdef order by indexname) from pg_indexes where tablename = 'person') as indexes,
        (select json_agg(pg_get_constraintdef(oid) order by conname) from pg_constraint where conrelid = 'person'::regclass) as constraints`;
    const before = await shape();
    /** Starts the import and resolves once its rows are being copied into the table. */
    const copying = async () => {
      const started = startImport(['people', file]);
      await waitFor(async () => {
        const [row] = await f.sql`
          select 1 as copying from pg_stat_activity
          where application_name = 'leadgate' and datname = current_database() and state = 'active' and query like 'copy "person"%'`;
        return row;
      }, 'the import to copy rows into person');
      return started;
    };

    const killed = await copying();
    killed.child.kill('SIGKILL');
    expect(await killed.child.exited()).toBe(null);
    await waitFor(
      async () =>
        (
          await f.sql`select 1 from pg_stat_activity where application_name = 'leadgate' and datname = current_database()`
        ).length === 0
          ? true
          : undefined,
      "the killed import's sessions to end",
    );
    expect(await f.checksum('person')).toEqual({ rows: 0, md5: '' });
    expect(await shape()).toEqual(before);

    const interrupted = await copying();
    interrupted.child.kill('SIGINT');
    expect(await interrupted.child.exited()).toBe(1);
    expect(interrupted.output.stderr).toBe(
      '\ninterrupted: rolling back (interrupt again to quit at once)\nerror: import interrupted; nothing was loaded\n',
    );
    expect(await f.checksum('person')).toEqual({ rows: 0, md5: '' });
    expect(await shape()).toEqual(before);
    expect(await f.state('people')).toEqual({ ready: true, row_count: 0 });
  });
});
