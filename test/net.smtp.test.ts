import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsLookup } from '../src/net/dns.ts';
import { createGuard } from '../src/net/guard.ts';
import { createSmtpProber, type SmtpOptions } from '../src/net/smtp.ts';
import { startDns, startSmtp, type LocalDns, type LocalSmtp } from './fixtures/net.ts';

let dns: LocalDns;
let smtp: LocalSmtp;
let plain: LocalSmtp;
let silent: net.Server;
let options: SmtpOptions;

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
    'slow.test': { mode: 'slow', delayMs: 5_000 },
    'busy-a.test': { mode: 'slow', delayMs: 150 },
    'busy-b.test': { mode: 'slow', delayMs: 150 },
    'policy.test': { mode: 'policy' },
  });
  // The same port on other loopback addresses: a server that never greets, and one without STARTTLS.
  silent = net.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(smtp.port, '127.0.0.2', resolve));
  plain = await startSmtp({ 'list.test': { mode: 'list', users: ['alice'] } }, { startTls: false, host: '127.0.0.4', port: smtp.port });
  const lookup = createDnsLookup({ servers: [`127.0.0.1:${dns.port}`], timeoutMs: 1_000 });
  const guard = createGuard({
    dns: lookup,
    webPorts: { http: 80, https: 443 },
    allow: ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'].map((a) => `${a}:${smtp.port}`),
  });
  options = { guard, port: smtp.port, heloName: 'checker.leadgate.test', mailFrom: 'verify@leadgate.test', timeoutMs: 400, startTls: true, domainConcurrency: 2 };
});
afterAll(async () => {
  await smtp?.close();
  await plain?.close();
  await new Promise((r) => silent?.close(r));
  await dns?.close();
});

const lastSession = (server: LocalSmtp) => server.sessions.at(-1)!;

describe('the SMTP probe', () => {
  it('says EHLO, upgrades with STARTTLS, asks RCPT for each address, then RSET and QUIT, never DATA', async () => {
    const prober = createSmtpProber(options);
    const result = await prober.probe({ domain: 'list.test', hosts: ['mx.one.test'], recipients: ['alice@list.test', 'nobody@list.test'] });
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
    const result = await createSmtpProber(options).probe({ domain: 'list.test', hosts: ['mx.plain.test'], recipients: ['alice@list.test'] });
    expect(result).toMatchObject({ host: 'mx.plain.test', tls: false, failure: null, replies: [{ code: 250 }] });
    expect(lastSession(plain).commands).not.toContain('STARTTLS');
  });

  it('moves to the next mail server when one never greets or refuses the connection', async () => {
    const started = Date.now();
    const result = await createSmtpProber(options).probe({ domain: 'list.test', hosts: ['mx.silent.test', 'mx.closed.test', 'mx.one.test'], recipients: ['bob@list.test'] });
    expect(result).toMatchObject({ host: 'mx.one.test', failure: null, replies: [{ code: 250 }] });
    // One greeting timeout (400 ms) and one refused connection, nothing more.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('bounds a stalled reply by the timeout and says at which stage', async () => {
    const started = Date.now();
    const result = await createSmtpProber(options).probe({ domain: 'slow.test', hosts: ['mx.one.test'], recipients: ['a@slow.test', 'b@slow.test'] });
    expect(result.failure).toEqual({ stage: 'rcpt', kind: 'timeout', reason: 'no reply within 400 ms' });
    expect(result.replies).toEqual([null, null]);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('reports a policy refusal as the reply it is', async () => {
    const result = await createSmtpProber(options).probe({ domain: 'policy.test', hosts: ['mx.one.test'], recipients: ['a@policy.test'] });
    expect(result.replies[0]).toEqual({ code: 554, enhanced: '5.7.1', text: '5.7.1 Client host rejected: access denied' });
  });

  it('keeps at most the configured number of sessions open per mail domain', async () => {
    const prober = createSmtpProber({ ...options, domainConcurrency: 2 });
    const before = smtp.sessions.length;
    const probes = ['busy-a.test', 'busy-b.test'].flatMap((domain) =>
      Array.from({ length: 6 }, (_, i) => prober.probe({ domain, hosts: ['mx.one.test'], recipients: [`u${i}@${domain}`] })),
    );
    const results = await Promise.all(probes);
    expect(results.every((r) => r.failure === null && r.replies[0]?.code === 250)).toBe(true);
    expect(smtp.sessions.length - before).toBe(12);
    // Two domains, two sessions each at most: four at once, and more than one (they do overlap).
    expect(smtp.peakConnections).toBeLessThanOrEqual(4);
    expect(smtp.peakConnections).toBeGreaterThanOrEqual(3);
  });

  it('refuses recipients that could smuggle commands', async () => {
    const before = smtp.sessions.length;
    await expect(createSmtpProber(options).probe({ domain: 'list.test', hosts: ['mx.one.test'], recipients: ['a@list.test>\r\nDATA'] })).rejects.toThrow(/not a probe-safe address/);
    expect(smtp.sessions.length).toBe(before);
  });
});
