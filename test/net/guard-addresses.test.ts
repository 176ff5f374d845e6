import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalIp, classifyAddress, parseIp } from '../../src/net/address.ts';
import { createDnsLookup } from '../../src/net/dns.ts';
import { createGuard, type GuardOptions, type OutboundGuard } from '../../src/net/guard.ts';
import { NetError } from '../../src/net/errors.ts';
import { startDns, type LocalDns } from '../fixtures/net.ts';

describe('classifyAddress: only public unicast addresses may be reached', () => {
  it.each([
    ['0.1.2.3', 'unspecified address (0.0.0.0/8) 0.1.2.3'],
    ['255.255.255.255', 'broadcast address 255.255.255.255'],
    ['239.1.2.3', 'multicast address (224.0.0.0/4) 239.1.2.3'],
    ['169.254.1.1', 'link-local address (169.254.0.0/16) 169.254.1.1'],
    ['127.0.0.2', 'loopback address (127.0.0.0/8) 127.0.0.2'],
    ['100.64.0.1', 'shared carrier-grade NAT address (100.64.0.0/10) 100.64.0.1'],
    ['172.31.255.254', 'private address (RFC 1918) 172.31.255.254'],
    ['192.0.2.1', 'reserved or documentation address 192.0.2.1'],
    ['240.0.0.1', 'reserved or documentation address 240.0.0.1'],
    ['192.175.48.1', 'AS112 address 192.175.48.1'],
    ['192.52.193.1', 'AMT relay address 192.52.193.1'],
    ['169.254.169.254', 'cloud metadata address 169.254.169.254'],
    ['100.100.100.200', 'cloud metadata address 100.100.100.200'],
  ])('IPv4 %s: %s', (address, reason) => expect(classifyAddress(address)).toEqual({ allowed: false, reason }));

  it.each([
    ['::', 'unspecified address (::) ::'],
    ['fe80::1', 'link-local address (fe80::/10) fe80::1'],
    ['ff02::1', 'multicast address (ff00::/8) ff02::1'],
    ['::1', 'loopback address (::1) ::1'],
    ['fd12:3456::1', 'unique-local address (fc00::/7) fd12:3456::1'],
    ['fec0::1', 'site-local address (fec0::/10) fec0::1'],
    ['100::1', 'discard-only address (100::/64) 100::1'],
    ['64:ff9b::808:808', 'NAT64 address (64:ff9b::/96), may reach any IPv4 address 64:ff9b::808:808'],
    ['2002:808:808::1', '6to4 tunnel address (2002::/16), may reach any IPv4 address 2002:808:808::1'],
    ['2001::1', 'Teredo tunnel address (2001::/32) 2001::1'],
    ['::ffff:0:102:304', 'IPv4-translated address ::ffff:0:102:304'],
    ['2001:db8::1', 'reserved or documentation address 2001:db8::1'],
    ['2001:2::1', 'benchmarking address 2001:2::1'],
    ['4000::1', 'non-global IPv6 address 4000::1'],
    ['fd00:ec2::254', 'cloud metadata address fd00:ec2::254'],
  ])('IPv6 %s: %s', (address, reason) => expect(classifyAddress(address)).toEqual({ allowed: false, reason }));

  it('judges an IPv4-mapped IPv6 address by the IPv4 address inside it', () => {
    expect(classifyAddress('::ffff:8.8.8.8')).toEqual({ allowed: true });
    expect(classifyAddress('::ffff:10.0.0.1')).toEqual({
      allowed: false,
      reason: 'IPv4-mapped private address (RFC 1918) 10.0.0.1',
    });
    expect(classifyAddress('::ffff:a9fe:a9fe')).toEqual({
      allowed: false,
      reason: 'IPv4-mapped cloud metadata address 169.254.169.254',
    });
  });

  it('allows public unicast addresses of both families', () => {
    for (const address of ['1.1.1.1', '93.184.216.34', '2606:4700::1111', '2a00:1450::1', '3fff:ffff::1'])
      expect(classifyAddress(address)).toEqual({ allowed: true });
  });

  it('refuses what is not an IP address', () => {
    expect(classifyAddress('example.com')).toEqual({ allowed: false, reason: 'not an IP address: example.com' });
    expect(classifyAddress('127.1')).toEqual({ allowed: false, reason: 'not an IP address: 127.1' });
  });
});

describe('parseIp and canonicalIp', () => {
  it('parses canonical literals only, with or without IPv6 brackets', () => {
    expect(parseIp('8.8.8.8')?.toString()).toBe('8.8.8.8');
    expect(parseIp('[2606:4700::1111]')?.toString()).toBe('2606:4700::1111');
    expect(parseIp('2606:4700::1111')?.kind()).toBe('ipv6');
    expect(parseIp('[::1')).toBeUndefined();
    expect(parseIp('::1]')).toBeUndefined();
    // Brackets count only as a pair around the whole text.
    expect(parseIp('x::1]')).toBeUndefined();
    expect(parseIp('[::1x')).toBeUndefined();
    for (const loose of ['127.1', '2130706433', '0x7f.0.0.1', '1.2.3', 'example.com', ''])
      expect(parseIp(loose), loose).toBeUndefined();
  });

  it('writes equal addresses the same way, and other text in lower case', () => {
    expect(canonicalIp('::ffff:127.0.0.1')).toBe(canonicalIp('::ffff:7f00:1'));
    expect(canonicalIp('2606:4700:0:0:0:0:0:1111')).toBe(canonicalIp('2606:4700::1111'));
    expect(canonicalIp('[::1]')).toBe(canonicalIp('::1'));
    expect(canonicalIp('10.0.0.1')).toBe('10.0.0.1');
    expect(canonicalIp('Not.An.IP')).toBe('not.an.ip');
  });
});

describe('the outbound guard, rule by rule', () => {
  let dns: LocalDns;
  let options: Omit<GuardOptions, 'webPorts'>;
  /** Production settings: standard web ports, no allow-list. */
  let guard: OutboundGuard;

  const longHost = `${'a'.repeat(62)}.${'b'.repeat(61)}.${'c'.repeat(61)}.${'d'.repeat(61)}.test`;

  beforeAll(async () => {
    dns = await startDns({
      'public.test': { A: ['93.184.216.34'] },
      'dual.test': { A: ['93.184.216.34'], AAAA: ['2606:4700::1111'] },
      'six.test': { AAAA: ['2606:4700::1111'] },
      'private.test': { A: ['10.9.8.7'] },
      'loop.test': { A: ['127.0.0.1'] },
      'broken.test': { fail: true },
      [longHost]: { A: ['93.184.216.34'] },
    });
    options = { dns: createDnsLookup({ servers: [`127.0.0.1:${dns.port}`], timeoutMs: 1_000 }) };
    guard = createGuard({ ...options, webPorts: { http: 80, https: 443 } });
  });
  afterAll(() => dns?.close());

  async function refused(promise: Promise<unknown>, kind = 'refused'): Promise<NetError> {
    const err = await promise.then(
      (value) => {
        throw new Error(`admitted: ${JSON.stringify(value)}`);
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NetError);
    expect((err as NetError).kind).toBe(kind);
    return err as NetError;
  }

  it('refuses ports outside 1–65535 and admits both ends', async () => {
    for (const port of [0, -1, 65_536, 80.5, Number.NaN]) {
      const err = await refused(guard.resolve('93.184.216.34', port));
      expect(err.message).toBe(`port ${port} is out of range`);
      expect(err.target).toBe(`93.184.216.34:${port}`);
    }
    expect(await guard.resolve('93.184.216.34', 1)).toEqual({
      host: '93.184.216.34',
      address: '93.184.216.34',
      family: 4,
      port: 1,
    });
    expect(await guard.resolve('93.184.216.34', 65_535)).toMatchObject({ port: 65_535 });
  });

  it('answers an IP literal without a lookup, with its family', async () => {
    const before = dns.queries.length;
    expect(await guard.resolve('[2606:4700::1111]', 443)).toEqual({
      host: '2606:4700::1111',
      address: '2606:4700::1111',
      family: 6,
      port: 443,
    });
    expect(await guard.resolve('0x5d.0xb8.0xd8.0x22', 80)).toEqual({
      host: '0x5d.0xb8.0xd8.0x22',
      address: '93.184.216.34',
      family: 4,
      port: 80,
    });
    expect(await guard.resolve('1572395042', 80)).toMatchObject({ address: '93.184.216.34', family: 4 });
    expect(dns.queries.length).toBe(before);
    expect((await refused(guard.resolve('[::1]', 80))).message).toBe('loopback address (::1) ::1');
    expect((await refused(guard.resolve('0x7f.1', 80))).message).toBe('loopback address (127.0.0.0/8) 127.0.0.1');
  });

  it('normalises the host: brackets, a trailing dot and case', async () => {
    expect(await guard.resolve('Public.TEST.', 443)).toEqual({
      host: 'public.test',
      address: '93.184.216.34',
      family: 4,
      port: 443,
    });
    const err = await refused(guard.resolve('LOOP.test.', 80));
    expect(err.target).toBe('loop.test:80');
    expect(err.message).toBe('loop.test resolves to loopback address (127.0.0.0/8) 127.0.0.1');
  });

  it('refuses bad host names before any lookup, saying why', async () => {
    const before = dns.queries.length;
    const cases: [string, string][] = [
      ['', 'empty host'],
      [`x${longHost}`, 'host name longer than 253 characters'],
      ['localhost', 'localhost is a localhost name'],
      ['printer.localhost', 'printer.localhost is a localhost name'],
      ['intranet', 'single-label host name "intranet" (an intranet name)'],
      ['-bad.test', '"-bad.test" is not a valid host name'],
      ['bad-.test', '"bad-.test" is not a valid host name'],
      ['under_score.test', '"under_score.test" is not a valid host name'],
      ['a..test', '"a..test" is not a valid host name'],
      [`${'x'.repeat(64)}.test`, `"${'x'.repeat(64)}.test" is not a valid host name`],
      // Only a bracket pair around the whole host is taken off.
      ['foo[bar.test', '"foo[bar.test" is not a valid host name'],
      ['foo]bar.test', '"foo]bar.test" is not a valid host name'],
    ];
    for (const [host, reason] of cases) expect((await refused(guard.resolve(host, 80))).message, host).toBe(reason);
    expect(dns.queries.length).toBe(before);
  });

  it('looks up names that are valid: a 63-character label, a 253-character name, a name merely containing "localhost"', async () => {
    expect(longHost.length).toBe(253);
    expect(await guard.resolve(longHost, 80)).toMatchObject({ host: longHost, address: '93.184.216.34' });
    const err = await refused(guard.resolve(`${'x'.repeat(63)}.test`, 80), 'dns');
    expect(err.message).toBe(`${'x'.repeat(63)}.test does not resolve: no such domain (NXDOMAIN)`);
    expect((await refused(guard.resolve('notlocalhost.test', 80), 'dns')).message).toMatch(
      /^notlocalhost\.test does not resolve/,
    );
    // Five numeric parts are no IPv4 form: a name, looked up as such.
    expect((await refused(guard.resolve('1.2.3.4.5', 80), 'dns')).message).toBe(
      '1.2.3.4.5 does not resolve: no such domain (NXDOMAIN)',
    );
    expect((await refused(guard.resolve('mylocalhost', 80))).message).toBe(
      'single-label host name "mylocalhost" (an intranet name)',
    );
  });

  it('reports a failing name server apart from a name that does not exist', async () => {
    const failed = await refused(guard.resolve('broken.test', 80), 'dns');
    expect(failed.message).toMatch(/^broken\.test: /);
    expect(failed.message).not.toMatch(/does not resolve/);
    expect(failed.target).toBe('broken.test:80');
    expect((await refused(guard.resolve('missing.test', 80), 'dns')).message).toBe(
      'missing.test does not resolve: no such domain (NXDOMAIN)',
    );
  });

  it('connects over IPv4 when a name has both families, over IPv6 when it has only that', async () => {
    expect(await guard.resolve('dual.test', 443)).toEqual({
      host: 'dual.test',
      address: '93.184.216.34',
      family: 4,
      port: 443,
    });
    expect(await guard.resolve('six.test', 443)).toEqual({
      host: 'six.test',
      address: '2606:4700::1111',
      family: 6,
      port: 443,
    });
  });

  it('prefers an IPv4 address whatever order the resolver gives, and lets unexpected resolver errors through', async () => {
    // A resolver of its own: answers in a fixed order, or fails the way no DNS answer does.
    const answers: Record<string, string[]> = { 'v6-first.test': ['2606:4700::1111', '93.184.216.34'] };
    const broken = new TypeError('resolver crashed');
    const resolver = {
      mx: async () => [],
      addresses: async (host: string) => {
        if (host in answers) return answers[host]!;
        throw broken;
      },
    };
    const g = createGuard({ dns: resolver, webPorts: { http: 80, https: 443 } });
    expect(await g.resolve('v6-first.test', 443)).toEqual({
      host: 'v6-first.test',
      address: '93.184.216.34',
      family: 4,
      port: 443,
    });
    await expect(g.resolve('crash.test', 80)).rejects.toBe(broken);
    await expect(g.checkUrl(new URL('https://crash.test/'))).rejects.toBe(broken);
  });

  describe('checkUrl', () => {
    it('takes the scheme’s default port and resolves the host', async () => {
      expect(await guard.checkUrl(new URL('http://public.test/a'))).toEqual({
        host: 'public.test',
        address: '93.184.216.34',
        family: 4,
        port: 80,
      });
      expect(await guard.checkUrl(new URL('https://public.test/a'))).toEqual({
        host: 'public.test',
        address: '93.184.216.34',
        family: 4,
        port: 443,
      });
      expect(await guard.checkUrl(new URL('https://[2606:4700::1111]/'))).toMatchObject({
        address: '2606:4700::1111',
        family: 6,
        port: 443,
      });
    });

    it('refuses other schemes, credentials and ports, naming the URL', async () => {
      const ws = await refused(guard.checkUrl(new URL('ws://public.test/')));
      expect(ws.message).toBe('scheme ws is not allowed (http and https only)');
      expect(ws.target).toBe('ws://public.test/');
      expect((await refused(guard.checkUrl(new URL('http://user@public.test/')))).message).toBe(
        'credentials in the URL are not allowed',
      );
      expect((await refused(guard.checkUrl(new URL('http://:secret@public.test/')))).message).toBe(
        'credentials in the URL are not allowed',
      );
      expect((await refused(guard.checkUrl(new URL('http://public.test:443/')))).message).toBe(
        'port 443 is not allowed for http (only 80)',
      );
      expect((await refused(guard.checkUrl(new URL('https://public.test:80/')))).message).toBe(
        'port 80 is not allowed for https (only 443)',
      );
    });

    it('names the URL in the refusal of its host, cut at 200 characters', async () => {
      const short = await refused(guard.checkUrl(new URL('http://private.test/x')));
      expect(short.target).toBe('http://private.test/x');
      expect(short.message).toBe('private.test resolves to private address (RFC 1918) 10.9.8.7');
      const path = 'p'.repeat(300);
      const long = await refused(guard.checkUrl(new URL(`http://private.test/${path}`)));
      expect(long.target).toBe(`${`http://private.test/${path}`.slice(0, 200)}…`);
      const exact = `http://private.test/${'q'.repeat(200 - 'http://private.test/'.length)}`;
      expect(exact.length).toBe(200);
      expect((await refused(guard.checkUrl(new URL(exact)))).target).toBe(exact);
      const dnsFailure = await refused(guard.checkUrl(new URL('https://missing.test/')), 'dns');
      expect(dnsFailure.target).toBe('https://missing.test/');
    });
  });

  describe('allow-list (tests only)', () => {
    it('takes "ip", "ip:port", "[ipv6]" and "[ipv6]:port" entries, and refuses anything else', () => {
      for (const entry of ['127.0.0.1', '127.0.0.1:8080', '::1', '[::1]', '[::1]:8080'])
        expect(
          () => createGuard({ ...options, webPorts: { http: 80, https: 443 }, allow: [entry] }),
          entry,
        ).not.toThrow();
      for (const entry of [
        'localhost:80',
        'example.com',
        '127.0.0.1:',
        '[::1]:x',
        '127.0.0.1:80:1',
        'nonsense',
        'x[::1]:80',
        'a:127.0.0.1:80',
      ]) {
        expect(() => createGuard({ ...options, webPorts: { http: 80, https: 443 }, allow: [entry] }), entry).toThrow(
          `outbound allow-list entry must be "ip", "ip:port" or "[ipv6]:port", got "${entry}"`,
        );
      }
    });

    it('admits a listed address on its port only, or on every port when none is given', async () => {
      const g = createGuard({
        ...options,
        webPorts: { http: 80, https: 443 },
        allow: ['127.0.0.1:8080', '[::1]:8443', '10.9.8.7'],
      });
      expect(await g.resolve('127.0.0.1', 8080)).toEqual({
        host: '127.0.0.1',
        address: '127.0.0.1',
        family: 4,
        port: 8080,
      });
      expect(await g.resolve('loop.test', 8080)).toEqual({
        host: 'loop.test',
        address: '127.0.0.1',
        family: 4,
        port: 8080,
      });
      expect((await refused(g.resolve('127.0.0.1', 8081))).message).toBe('loopback address (127.0.0.0/8) 127.0.0.1');
      expect(await g.resolve('::1', 8443)).toMatchObject({ address: '::1', family: 6 });
      expect(await g.resolve('0:0:0:0:0:0:0:1', 8443)).toMatchObject({ family: 6 });
      expect((await refused(g.resolve('::1', 8080))).message).toBe('loopback address (::1) ::1');
      for (const port of [1, 25, 65_535])
        expect(await g.resolve('private.test', port)).toMatchObject({ address: '10.9.8.7', port });
    });

    it('refuses every address not on the list, public ones included', async () => {
      const g = createGuard({ ...options, webPorts: { http: 80, https: 443 }, allow: ['127.0.0.1:8080'] });
      expect((await refused(g.resolve('93.184.216.34', 80))).message).toBe(
        '93.184.216.34:80 is not on the outbound allow-list',
      );
      expect((await refused(g.resolve('public.test', 8080))).message).toBe(
        'public.test resolves to 93.184.216.34:8080 is not on the outbound allow-list',
      );
    });

    it('lets a listed test server be reached on a port other than the web ports', async () => {
      const g = createGuard({ ...options, webPorts: { http: 80, https: 443 }, allow: ['127.0.0.1:8080'] });
      expect(await g.checkUrl(new URL('http://loop.test:8080/hook'))).toEqual({
        host: 'loop.test',
        address: '127.0.0.1',
        family: 4,
        port: 8080,
      });
      const other = await refused(g.checkUrl(new URL('http://loop.test:9090/hook')));
      expect(other.target).toBe('http://loop.test:9090/hook');
      expect(other.message).toBe('loop.test resolves to loopback address (127.0.0.0/8) 127.0.0.1');
      const missing = await refused(g.checkUrl(new URL('http://missing.test:9090/')), 'dns');
      expect(missing.target).toBe('http://missing.test:9090/');
      // Without an allow-list, another port is refused before any lookup.
      const before = dns.queries.length;
      expect((await refused(guard.checkUrl(new URL('http://loop.test:8080/hook')))).message).toBe(
        'port 8080 is not allowed for http (only 80)',
      );
      expect(dns.queries.length).toBe(before);
    });
  });
});
