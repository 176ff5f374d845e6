/**
 * The HubSpot fake (test/helpers/fakes/hubspot.ts) in a process of its own, forked and driven over IPC
 * by the `destinations` suite, so that the contacts it keeps and its CPU are not the gateway's. One
 * process holds several fakes, each with its own rate limit. Commands: `start {rateLimit, tokens}` →
 * the fake's URL (every token a private app of its own, so each has its own window); `log {url}` → the
 * batch upserts it answered (status and time); `state {url}` → how many contacts it holds and this
 * process's CPU so far; `clear {url}` forgets its contacts (its windows stay).
 *
 * The fake finds a contact by scanning every one it holds, for each input: at 10,000 contacts a batch of
 * 100 costs it some 70 ms of CPU, 3.5–5 s for a delivery of 10,000 (two shared CPUs, load 3–4), which
 * HubSpot's index does not cost. The bench's contacts are all new, so here the fake keeps them in a map
 * its scan finds empty: every input is still validated, written and answered as the fake does, and
 * created, as it would be anyway.
 */
import {
  type CrmRecord,
  type FakeHubspot,
  type FakeHubspotOptions,
  startFakeHubspot,
} from '../../test/helpers/fakes/hubspot.ts';

export type FakeCommand =
  | { cmd: 'start'; args: { rateLimit: NonNullable<FakeHubspotOptions['rateLimit']>; tokens: string[] } }
  | { cmd: 'log'; args: { url: string } }
  | { cmd: 'state'; args: { url: string } }
  | { cmd: 'clear'; args: { url: string } };

export interface FakeState {
  contacts: number;
  /** CPU of the fakes' process so far (user + system), ms. */
  cpuMs: number;
}

export interface UpsertLogEntry {
  status: number;
  /** When the fake answered, ms since the epoch. */
  time: number;
}

const SCOPES = ['crm.objects.contacts.write', 'crm.objects.contacts.read'];

/** Contacts kept and counted, never found by a scan (`values()` is the fake's only scan). */
class UnscannedContacts extends Map<string, CrmRecord> {
  override values() {
    return new Map<string, CrmRecord>().values();
  }
}
const fakes = new Map<string, FakeHubspot>();

const fakeAt = (url: string) => {
  const fake = fakes.get(url);
  if (!fake) throw new Error(`no fake at ${url}`);
  return fake;
};

async function answer(command: FakeCommand): Promise<unknown> {
  switch (command.cmd) {
    case 'start': {
      const fake = await startFakeHubspot({
        privateApps: command.args.tokens.map((token, i) => ({ token, appId: 100 + i, scopes: SCOPES })),
        rateLimit: command.args.rateLimit,
        resultOrder: 'shuffled',
      });
      fake.records.contacts = new UnscannedContacts();
      fakes.set(fake.url, fake);
      return fake.url;
    }
    case 'log':
      return fakeAt(command.args.url)
        .requests.filter((r) => r.path.endsWith('/batch/upsert'))
        .map((r): UpsertLogEntry => ({ status: r.status, time: r.time }));
    case 'state': {
      const cpu = process.cpuUsage();
      return { contacts: fakeAt(command.args.url).records.contacts.size, cpuMs: (cpu.user + cpu.system) / 1000 };
    }
    case 'clear':
      // The fake finds a contact by scanning all it holds: an upsert costs it more the more it holds.
      fakeAt(command.args.url).records.contacts.clear();
      return null;
  }
}

process.on('message', (message: { id: number } & FakeCommand) => {
  answer(message).then(
    (value) => process.send?.({ id: message.id, value }),
    (err: unknown) => process.send?.({ id: message.id, error: String(err) }),
  );
});
process.on('disconnect', () => {
  Promise.all([...fakes.values()].map((fake) => fake.close())).finally(() => process.exit(0));
});
