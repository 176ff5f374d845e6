import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress } from '../../src/net/address.ts';
import { createDnsLookup } from '../../src/net/dns.ts';
import { createGuard, type OutboundGuard } from '../../src/net/guard.ts';
import { guardedGet, guardedPost, type WebLimits } from '../../src/net/http.ts';
import { createSmtpProber } from '../../src/net/smtp.ts';
import { NetError } from '../../src/net/errors.ts';
import { startDns, startSmtp, startWeb, type LocalDns, type LocalSmtp, type LocalWeb } from '../fixtures/net.ts';
import { gate } from '../helpers/wait.ts';

let dns: LocalDns;
let web: LocalWeb;
let smtp: LocalSmtp;
/** Production settings: standard web ports, no allow-list. */
let guard: OutboundGuard;
/** Test settings: the local web server's port, and only it (and the SMTP server) admitted. */
let testGuard: OutboundGuard;
const limits: WebLimits = { timeoutMs: 2_000, maxBytes: 1024 * 1024, maxRedirects: 5, userAgent: 'leadgate-test' };

const redirect = (location: string) => ({ status: 302, headers: { location } });
/** /slow answers only once the file is done. */
const slow = gate();

beforeAll(async () => {
  dns = await startDns({
    'internal.corp.test': { A: ['10.1.2.3'] },
    'meta.test': { A: ['169.254.169.254'] },
    'ula.test': { AAAA: ['fd12:3456::1'] },
    'mapped.test': { AAAA: ['::ffff:7f00:1'] },
    'cgnat.test': { A: ['100.64.1.1'] },
    'mixed.test': { A: ['1.1.1.1', '10.0.0.1'] },
    'site.test': { A: ['127.0.0.1'] },
    'rebind.test': { A: ['127.0.0.1'] },
    'mx.private.test': { A: ['192.168.0.25'] },
    'mx.local.test': { A: ['127.0.0.1'] },
  });
  const big = 'x'.repeat(3 * 1024 * 1024);
  web = await startWeb({
    'site.test': {
      '/': '<p>hello</p>',
      '/big': big,
      '/slow': { body: 'late', until: slow.promise },
      '/gzip': { headers: { 'content-encoding': 'gzip' }, body: gzipSync('<p>compressed page</p>') },
      '/hop': redirect('/'),
      '/to-metadata': redirect('http://169.254.169.254/latest/meta-data/'),
      '/to-private-name': redirect('http://internal.corp.test/admin'),
      '/to-decimal': redirect('http://2130706433/'),
      '/to-ipv6-loopback': redirect('http://[::1]/'),
      '/to-other-port': redirect('http://127.0.0.1:1/'),
      '/to-file': redirect('file:///etc/passwd'),
      '/to-mapped': redirect('http://[::ffff:10.0.0.1]/'),
      '/loop': redirect('/loop'),
    },
    'rebind.test': { '/': 'pinned' },
  });
  smtp = await startSmtp({ 'local.test': { mode: 'catch-all' } });
  const lookup = createDnsLookup({ servers: [`127.0.0.1:${dns.port}`], timeoutMs: 1_000 });
  guard = createGuard({ dns: lookup, webPorts: { http: 80, https: 443 } });
  testGuard = createGuard({
    dns: lookup,
    webPorts: { http: web.port, https: web.port },
    allow: [`127.0.0.1:${web.port}`, `127.0.0.1:${smtp.port}`],
  });
});
afterAll(async () => {
  slow.open();
  await web?.close();
  await smtp?.close();
  await dns?.close();
});

async function refusal(g: OutboundGuard, url: string): Promise<string> {
  const err = await guardedGet(g, url, limits).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `${url} was fetched`).toBeInstanceOf(NetError);
  expect((err as NetError).kind, `${url}: ${(err as NetError).message}`).toBe('refused');
  return (err as NetError).message;
}

/** Targets a caller might hand the crawler (or a webhook URL), each with the reason it is refused. */
const CORPUS: [string, RegExp][] = [
  ['http://127.0.0.1/', /loopback address \(127\.0\.0\.0\/8\) 127\.0\.0\.1/],
  ['http://127.1/', /loopback address .*127\.0\.0\.1/],
  ['http://127.0.0.53:80/', /loopback/],
  ['http://0.0.0.0/', /unspecified address/],
  ['http://10.0.0.1/', /private address \(RFC 1918\) 10\.0\.0\.1/],
  ['http://172.16.5.4/', /private address \(RFC 1918\)/],
  ['http://192.168.1.1/', /private address \(RFC 1918\)/],
  ['http://169.254.169.254/latest/meta-data/', /cloud metadata address 169\.254\.169\.254/],
  ['http://169.254.10.10/', /link-local address \(169\.254\.0\.0\/16\)/],
  ['http://100.64.0.1/', /carrier-grade NAT/],
  ['http://100.100.100.200/', /cloud metadata address/],
  ['http://224.0.0.1/', /multicast address/],
  ['http://255.255.255.255/', /broadcast address/],
  ['http://198.18.0.1/', /reserved or documentation address/],
  ['http://2130706433/', /loopback .*127\.0\.0\.1/],
  ['http://0177.0.0.1/', /loopback .*127\.0\.0\.1/],
  ['http://0x7f.0.0.1/', /loopback .*127\.0\.0\.1/],
  ['http://017700000001/', /loopback .*127\.0\.0\.1/],
  ['http://0xa9fea9fe/', /cloud metadata address 169\.254\.169\.254/],
  ['http://10.1/', /private address .*10\.0\.0\.1/],
  ['http://[::1]/', /loopback address \(::1\)/],
  ['http://[::]/', /unspecified address \(::\)/],
  ['http://[::ffff:127.0.0.1]/', /IPv4-mapped loopback address/],
  ['http://[::ffff:a9fe:a9fe]/', /IPv4-mapped cloud metadata address 169\.254\.169\.254/],
  ['http://[fd00::1]/', /unique-local address \(fc00::\/7\)/],
  ['http://[fe80::1]/', /link-local address \(fe80::\/10\)/],
  ['http://[ff02::1]/', /multicast address \(ff00::\/8\)/],
  ['http://[64:ff9b::a9fe:a9fe]/', /NAT64 address/],
  ['http://[2002:7f00:1::]/', /6to4 tunnel address/],
  ['http://[fd00:ec2::254]/', /cloud metadata address fd00:ec2::254/],
  ['http://localhost/', /localhost is a localhost name/],
  ['http://api.localhost/', /localhost name/],
  ['http://intranet/', /single-label host name "intranet"/],
  ['http://internal.corp.test/', /internal\.corp\.test resolves to private address \(RFC 1918\) 10\.1\.2\.3/],
  ['http://meta.test/', /meta\.test resolves to cloud metadata address 169\.254\.169\.254/],
  ['http://ula.test/', /ula\.test resolves to unique-local address/],
  ['http://mapped.test/', /mapped\.test resolves to IPv4-mapped loopback/],
  ['http://cgnat.test/', /cgnat\.test resolves to shared carrier-grade NAT address/],
  ['http://mixed.test/', /mixed\.test resolves to private address \(RFC 1918\) 10\.0\.0\.1/],
  ['https://site.test:8443/', /port 8443 is not allowed for https \(only 443\)/],
  ['http://site.test:22/', /port 22 is not allowed for http/],
  ['ftp://site.test/file', /scheme ftp is not allowed/],
  ['file:///etc/passwd', /scheme file is not allowed/],
  ['gopher://site.test:70/', /scheme gopher is not allowed/],
  ['http://user:secret@site.test/', /credentials in the URL are not allowed/],
];

describe('the outbound guard refuses every unsafe target, with the reason', () => {
  it('has a corpus of at least 30 bad targets', () => expect(CORPUS.length).toBeGreaterThanOrEqual(30));

  it.each(CORPUS)('%s', async (url, reason) => {
    expect(await refusal(guard, url)).toMatch(reason);
  });

  it('refuses a redirect to an unsafe target at the hop that leads there', async () => {
    const base = `http://site.test:${web.port}`;
    const cases: [string, RegExp][] = [
      ['/to-metadata', /^redirected to http:\/\/169\.254\.169\.254\/latest\/meta-data\/: cloud metadata address/],
      [
        '/to-private-name',
        /^redirected to http:\/\/internal\.corp\.test\/admin: internal\.corp\.test resolves to private address/,
      ],
      ['/to-decimal', /^redirected to http:\/\/127\.0\.0\.1\/: loopback address/],
      ['/to-ipv6-loopback', /^redirected to http:\/\/\[::1\]\/: loopback address \(::1\)/],
      ['/to-other-port', /^redirected to http:\/\/127\.0\.0\.1:1\/: loopback address/],
      ['/to-file', /^redirected to file:\/\/\/etc\/passwd: scheme file is not allowed/],
      ['/to-mapped', /^redirected to http:\/\/\[::ffff:a00:1\]\/: IPv4-mapped private address/],
    ];
    for (const [path, reason] of cases) expect(await refusal(testGuard, `${base}${path}`), path).toMatch(reason);
    const before = web.requests.length;
    await refusal(testGuard, `${base}/to-metadata`);
    // The first hop was fetched; nothing was sent to the target it pointed at.
    expect(web.requests.slice(before)).toEqual(['site.test /to-metadata']);
  });

  it('refuses the local test servers themselves without the allow-list', async () => {
    const noAllow = createGuard({
      dns: createDnsLookup({ servers: [`127.0.0.1:${dns.port}`], timeoutMs: 1_000 }),
      webPorts: { http: web.port, https: web.port },
    });
    expect(await refusal(noAllow, `http://127.0.0.1:${web.port}/`)).toMatch(/loopback address/);
    expect(await refusal(noAllow, `http://site.test:${web.port}/`)).toMatch(/site\.test resolves to loopback address/);
    const prober = createSmtpProber({
      guard: noAllow,
      port: smtp.port,
      heloName: 'checker.leadgate.test',
      mailFrom: 'verify@leadgate.test',
      timeoutMs: 1_000,
      startTls: false,
      domainConcurrency: 1,
    });
    const probe = await prober.probe({ domain: 'local.test', hosts: ['mx.local.test'], recipients: ['a@local.test'] });
    expect(probe.failure).toMatchObject({
      stage: 'connect',
      kind: 'refused',
      reason: expect.stringMatching(/mx\.local\.test resolves to loopback address/),
    });
    // The same servers through the test allow-list are reachable.
    expect((await guardedGet(testGuard, `http://site.test:${web.port}/`, limits)).body).toBe('<p>hello</p>');
    const allowed = createSmtpProber({
      guard: testGuard,
      port: smtp.port,
      heloName: 'checker.leadgate.test',
      mailFrom: 'verify@leadgate.test',
      timeoutMs: 1_000,
      startTls: false,
      domainConcurrency: 1,
    });
    expect(
      (await allowed.probe({ domain: 'local.test', hosts: ['mx.local.test'], recipients: ['a@local.test'] }))
        .replies[0],
    ).toMatchObject({ code: 250 });
  });

  it('admits nothing outside the allow-list in test mode, even a public address', async () => {
    await expect(testGuard.resolve('1.1.1.1', 80)).rejects.toThrow(/1\.1\.1\.1:80 is not on the outbound allow-list/);
    await expect(testGuard.resolve('mixed.test', 80)).rejects.toThrow(
      /mixed\.test resolves to private address \(RFC 1918\) 10\.0\.0\.1/,
    );
    await expect(testGuard.resolve('mx.private.test', 25)).rejects.toThrow(
      /mx\.private\.test resolves to private address \(RFC 1918\) 192\.168\.0\.25/,
    );
  });

  it('connects to the address it checked: one lookup per hop, no second resolution', async () => {
    const before = dns.queries.filter((q) => q.name === 'rebind.test').length;
    const res = await guardedGet(testGuard, `http://rebind.test:${web.port}/`, limits);
    expect(res.body).toBe('pinned');
    const lookups = dns.queries.filter((q) => q.name === 'rebind.test').slice(before);
    // One A and one AAAA question, both asked by the guard before connecting.
    expect(lookups.map((q) => q.type).sort()).toEqual([1, 28]);
  });

  it('classifies public unicast addresses as allowed', () => {
    for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '2001:4860:4860::8888'])
      expect(classifyAddress(ip)).toEqual({ allowed: true });
  });
});

describe('guarded POST (webhook deliveries)', () => {
  it('posts to an admitted receiver and does not follow its redirects', async () => {
    const base = `http://site.test:${web.port}`;
    expect(await guardedPost(testGuard, `${base}/`, '{"a":1}', { 'content-type': 'application/json' }, limits)).toEqual(
      { status: 200, body: '<p>hello</p>' },
    );
    const before = web.requests.length;
    expect((await guardedPost(testGuard, `${base}/to-metadata`, '{}', {}, limits)).status).toBe(302);
    expect(web.requests.slice(before)).toEqual(['site.test /to-metadata']);
  });

  it('refuses an unsafe receiver before sending anything', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://internal.corp.test/hook',
      'http://[::1]/hook',
    ]) {
      await expect(guardedPost(guard, url, '{}', {}, limits)).rejects.toMatchObject({ kind: 'refused' });
    }
  });
});

describe('guarded fetch limits', () => {
  const base = () => `http://site.test:${web.port}`;

  it('cuts a body at the size limit', async () => {
    const res = await guardedGet(testGuard, `${base()}/big`, { ...limits, maxBytes: 100_000 });
    expect(res.truncated).toBe(true);
    expect(res.body.length).toBe(100_000);
  });

  it('decompresses gzip bodies', async () => {
    expect((await guardedGet(testGuard, `${base()}/gzip`, limits)).body).toBe('<p>compressed page</p>');
  });

  it('gives up at the time limit, redirects included', async () => {
    const err = await guardedGet(testGuard, `${base()}/slow`, { ...limits, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetError);
    expect((err as NetError).kind).toBe('timeout');
    // The page is still held: the fetch gave up without its answer.
    expect(web.requests).toContain('site.test /slow');
    expect(web.held).toBe(1);
  });

  it('follows redirects up to the limit', async () => {
    expect((await guardedGet(testGuard, `${base()}/hop`, limits)).url).toBe(`${base()}/`);
    const err = await guardedGet(testGuard, `${base()}/loop`, { ...limits, maxRedirects: 3 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'redirects', message: 'more than 3 redirects' });
  });

  it('reports an unreachable server and an unresolvable name', async () => {
    const closed = createGuard({
      dns: createDnsLookup({ servers: [`127.0.0.1:${dns.port}`], timeoutMs: 1_000 }),
      webPorts: { http: 9, https: 9 },
      allow: ['127.0.0.1:9'],
    });
    await expect(guardedGet(closed, 'http://site.test:9/', limits)).rejects.toMatchObject({
      kind: 'connect',
      message: 'connection refused',
    });
    await expect(guardedGet(testGuard, `http://nowhere.test:${web.port}/`, limits)).rejects.toMatchObject({
      kind: 'dns',
      message: 'nowhere.test does not resolve: no such domain (NXDOMAIN)',
    });
  });
});
