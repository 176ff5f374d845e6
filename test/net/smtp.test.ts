import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsLookup } from '../../src/net/dns.ts';
import { createGuard } from '../../src/net/guard.ts';
import { createSmtpProber, type SmtpOptions } from '../../src/net/smtp.ts';
import { startDns, startSmtp, type LocalDns, type LocalSmtp } from '../fixtures/net.ts';
import { gate, waitFor } from '../helpers/wait.ts';

let dns: LocalDns;
let smtp: LocalSmtp;
let plain: LocalSmtp;
let silent: net.Server;
/** Connections the never-greeting server has taken. */
let silentConnections = 0;
let options: SmtpOptions;
/** slow.test's RCPT replies are held until the file is done; the busy domains' until the concurrency test lets them go. */
const stalled = gate();
const busy = gate();

beforeAll(async () => {
  dns = await startDns({
    'mx.one.test': { A: ['127.0.0.1'] },
    'mx.silent.test': { A: ['127.0.0.2'] },
    'mx.closed.test': { A: ['127.0.0.3'] },
    'mx.plain.test': { A: ['127.0.0.4'] },
  });
  smtp = await startSmtp({
    'list.test': { mode: 'list', users: ['alice', 'bob'] },
    'catchall.test': { mode: 'catch-all' },
    'slow.test': { mode: 'held', until: stalled.promise },
    'busy-a.test': { mode: 'held', until: busy.promise },
    'busy-b.test': { mode: 'held', until: busy.promise },
    'policy.test': { mode: 'policy' },
  });
  // The same port on other loopback addresses: a server that never greets, and one without STARTTLS.
  silent = net.createServer(() => {
    silentConnections += 1;
  });
  await new Promise<void>((resolve) => silent.listen(smtp.port, '127.0.0.2', resolve));
  plain = await startSmtp(
    { 'list.test': { mode: 'list', users: ['alice'] } },
    { startTls: false, host: '127.0.0.4', port: smtp.port },
  );
  const lookup = createDnsLookup({ servers: [`127.0.0.1:${dns.port}`], timeoutMs: 1_000 });
  const guard = createGuard({
    dns: lookup,
    webPorts: { http: 80, https: 443 },
    allow: ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'].map((a) => `${a}:${smtp.port}`),
  });
  options = {
    guard,
    port: smtp.port,
    heloName: 'checker.leadgate.test',
    mailFrom: 'verify@leadgate.test',
    timeoutMs: 400,
    startTls: true,
    domainConcurrency: 2,
  };
});
afterAll(async () => {
  stalled.open();
  busy.open();
  await smtp?.close();
  await plain?.close();
  await new Promise((r) => silent?.close(r));
  await dns?.close();
});

const lastSession = (server: LocalSmtp) => server.sessions.at(-1)!;

describe('the SMTP probe', () => {
  it('says EHLO, upgrades with STARTTLS, asks RCPT for each address, then RSET and QUIT, never DATA', async () => {
    const prober = createSmtpProber(options);
    const result = await prober.probe({
      domain: 'list.test',
      hosts: ['mx.one.test'],
      recipients: ['alice@list.test', 'nobody@list.test'],
    });
    expect(result).toMatchObject({ host: 'mx.one.test', tls: true, failure: null });
    expect(result.replies.map((r) => [r!.code, r!.enhanced])).toEqual([
      [250, null],
      [550, '5.1.1'],
    ]);
    const session = lastSession(smtp);
    expect(session.secure).toBe(true);
    expect(session.commands).toEqual([
      'EHLO checker.leadgate.test',
      'STARTTLS',
      'EHLO checker.leadgate.test',
      'MAIL FROM:<verify@leadgate.test>',
      'RCPT TO:<alice@list.test>',
      'RCPT TO:<nobody@list.test>',
      'RSET',
      'QUIT',
    ]);
    expect(smtp.sessions.flatMap((s) => s.commands).some((c) => /^DATA/i.test(c))).toBe(false);
  });

  it('stays in plain text with a server that offers no STARTTLS', async () => {
    const result = await createSmtpProber(options).probe({
      domain: 'list.test',
      hosts: ['mx.plain.test'],
      recipients: ['alice@list.test'],
    });
    expect(result).toMatchObject({ host: 'mx.plain.test', tls: false, failure: null, replies: [{ code: 250 }] });
    expect(lastSession(plain).commands).not.toContain('STARTTLS');
  });

  it('moves to the next mail server when one never greets or refuses the connection', async () => {
    const [silentBefore, sessionsBefore] = [silentConnections, smtp.sessions.length];
    const result = await createSmtpProber(options).probe({
      domain: 'list.test',
      hosts: ['mx.silent.test', 'mx.closed.test', 'mx.one.test'],
      recipients: ['bob@list.test'],
    });
    expect(result).toMatchObject({ host: 'mx.one.test', failure: null, replies: [{ code: 250 }] });
    // One try at the server that never greets (given up at its greeting timeout), then one session at the next that answers.
    expect(silentConnections - silentBefore).toBe(1);
    expect(smtp.sessions.length - sessionsBefore).toBe(1);
    expect(lastSession(smtp).commands).toContain('RCPT TO:<bob@list.test>');
  });

  it('bounds a stalled reply by the timeout and says at which stage', async () => {
    const result = await createSmtpProber(options).probe({
      domain: 'slow.test',
      hosts: ['mx.one.test'],
      recipients: ['a@slow.test', 'b@slow.test'],
    });
    expect(result.failure).toEqual({ stage: 'rcpt', kind: 'timeout', reason: 'no reply within 400 ms' });
    expect(result.replies).toEqual([null, null]);
    // The server still holds its reply to the first RCPT: the probe gave up on it and asked nothing more.
    expect(smtp.held).toBe(1);
    expect(lastSession(smtp).commands.filter((c) => c.startsWith('RCPT'))).toEqual(['RCPT TO:<a@slow.test>']);
  });

  it('reports a policy refusal as the reply it is', async () => {
    const result = await createSmtpProber(options).probe({
      domain: 'policy.test',
      hosts: ['mx.one.test'],
      recipients: ['a@policy.test'],
    });
    expect(result.replies[0]).toEqual({
      code: 554,
      enhanced: '5.7.1',
      text: '5.7.1 Client host rejected: access denied',
    });
  });

  it('keeps at most the configured number of sessions open per mail domain', async () => {
    const prober = createSmtpProber({ ...options, domainConcurrency: 2, timeoutMs: 60_000 });
    // Earlier tests' sessions have closed, so the peak below is this test's.
    await waitFor(
      () => smtp.openConnections,
      (n) => n === 0,
      { what: 'earlier sessions to close' },
    );
    const peakBefore = smtp.peakConnections;
    const heldBefore = smtp.held; // slow.test's, held until the end
    const before = smtp.sessions.length;
    const probes = ['busy-a.test', 'busy-b.test'].flatMap((domain) =>
      Array.from({ length: 6 }, (_, i) =>
        prober.probe({ domain, hosts: ['mx.one.test'], recipients: [`u${i}@${domain}`] }),
      ),
    );
    // Every reply is held until two sessions per domain wait on one: the most the prober may open at once.
    await waitFor(
      () => smtp.held - heldBefore,
      (n) => n === 4,
      { what: 'four sessions waiting on their RCPT' },
    );
    busy.open();
    const results = await Promise.all(probes);
    expect(results.every((r) => r.failure === null && r.replies[0]?.code === 250)).toBe(true);
    expect(smtp.sessions.length - before).toBe(12);
    // Two domains, two sessions each: four at once, never more.
    expect(peakBefore).toBeLessThan(4);
    expect(smtp.peakConnections).toBe(4);
  });

  it('refuses recipients that could smuggle commands', async () => {
    const before = smtp.sessions.length;
    await expect(
      createSmtpProber(options).probe({
        domain: 'list.test',
        hosts: ['mx.one.test'],
        recipients: ['a@list.test>\r\nDATA'],
      }),
    ).rejects.toThrow(/not a probe-safe address/);
    expect(smtp.sessions.length).toBe(before);
  });
});
