/**
 * Network tools benchmark. A server thread hosts a local DNS server, a scripted SMTP server and
 * 100 small websites; the main thread measures, side by side and alternated over rounds:
 *
 * SMTP — 1,000 addresses over 50 domains:
 *   A  the email validator's checker (syntax, flags, MX lookup, outbound guard, SMTP sessions of up
 *      to 20 addresses plus one random address per domain, classification) at the default concurrency
 *   B  a bare loop saying exactly the same SMTP dialogue over raw sockets (no DNS, no guard, no rules)
 *   C  a bare loop of one session per address (EHLO, STARTTLS, MAIL, RCPT address, RCPT random,
 *      RSET, QUIT), the naive way, at the same concurrency
 * Web — 100 sites of 5 pages: the crawler (robots.txt, guard, extraction, link ranking) against a
 * bare loop fetching the same URLs with node:http at the same concurrency.
 */
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { loadConfig, type NetworkConfig } from '../../src/config.ts';
import { createNetwork } from '../../src/net/index.ts';
import { KeyedLimiter, mapConcurrent } from '../../src/net/limiter.ts';
import { EmailChecker, randomMailbox } from '../../src/tools/lib/email/checker.ts';
import { crawlSite } from '../../src/tools/lib/email/crawl.ts';
import { startDns, startSmtp, startWeb, type MailboxMode, type Sites, type Zone } from '../../test/fixtures/net.ts';
import { alternate, median, pad, round, timed, verdict, type Suite } from './harness.ts';

export interface EmailBenchOptions {
  addresses: number;
  domains: number;
  sites: number;
  rounds: number;
}

export const EMAIL_BENCH_DEFAULTS: EmailBenchOptions = { addresses: 1_000, domains: 50, sites: 100, rounds: 3 };

export interface Throughput {
  label: string;
  /** Items per second, median of the rounds. */
  perSec: number;
  /** Milliseconds per round, median. */
  ms: number;
  rounds: number[];
}

export interface EmailBenchResult {
  options: EmailBenchOptions;
  concurrency: { sessions: number; perDomain: number; crawl: number };
  smtp: {
    validator: Throughput;
    sameDialogue: Throughput;
    perAddress: Throughput;
    vsSameDialogue: number;
    vsPerAddress: number;
    statuses: Record<string, number>;
  };
  crawl: { crawler: Throughput; bare: Throughput; ratio: number; pagesPerSite: number };
}

interface ServerPorts {
  dns: number;
  smtp: number;
  web: number;
  closed: number;
}

const domainName = (i: number) => `d${i}.bench.test`;
const siteName = (i: number) => `s${i}.bench.test`;
const SITE_PAGES = ['/', '/team', '/about', '/contact', '/leadership'];

function sitePages(i: number): Record<string, string> {
  const domain = siteName(i);
  const card = (n: number, title: string) =>
    `<div class="team-member"><h3>Person${'abcdefghij'[n]} Example</h3><p>${title}</p><a href="mailto:p${n}@${domain}">mail</a></div>`;
  return {
    '/robots.txt': 'User-agent: *\nDisallow: /private/\n',
    '/': `<html><body><a href="/team">Team</a><a href="/about">About</a><a href="/contact">Contact</a><a href="/leadership">Leadership</a><a href="/blog">Blog</a><p>info@${domain}</p></body></html>`,
    '/team': `<html><body>${card(0, 'Chief Executive Officer')}${card(1, 'VP of Sales')}${card(2, 'Head of Marketing')}</body></html>`,
    '/about': `<html><body><p>About ${domain}. Write to press [at] ${domain.replace(/\./g, ' [dot] ')}.</p></body></html>`,
    '/contact': `<html><body><p>sales at ${domain.replace(/\./g, ' dot ')}</p></body></html>`,
    '/leadership': `<html><body><script type="application/ld+json">{"@type":"Person","name":"Lead Person","jobTitle":"CTO"}</script></body></html>`,
  };
}

/** Runs in the server thread: DNS, SMTP and web servers on 127.0.0.1, ports posted back. */
async function serve(options: EmailBenchOptions) {
  const zone: Zone = { 'mx.bench.test': { A: ['127.0.0.1'] } };
  const mailboxes: Record<string, MailboxMode> = {};
  const perDomain = Math.ceil(options.addresses / options.domains);
  for (let i = 0; i < options.domains; i++) {
    zone[domainName(i)] = { MX: [{ exchange: 'mx.bench.test', priority: 10 }] };
    mailboxes[domainName(i)] = {
      mode: 'list',
      users: Array.from({ length: Math.ceil(perDomain / 2) }, (_, j) => `u${j * 2}`),
    };
  }
  const sites: Sites = {};
  for (let i = 0; i < options.sites; i++) {
    zone[siteName(i)] = { A: ['127.0.0.1'] };
    sites[siteName(i)] = sitePages(i);
  }
  const dns = await startDns(zone);
  const smtp = await startSmtp(mailboxes);
  const web = await startWeb(sites);
  // A port nobody listens on: https attempts are refused at once and the crawler falls back to http.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const closed = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  parentPort!.postMessage({ dns: dns.port, smtp: smtp.port, web: web.port, closed } satisfies ServerPorts);
}

if (!isMainThread && (workerData as { emailBenchServers?: EmailBenchOptions } | null)?.emailBenchServers) {
  void serve((workerData as { emailBenchServers: EmailBenchOptions }).emailBenchServers);
}

/** The bare SMTP dialogue over a raw socket: no DNS, no guard, no interpretation. */
async function bareSession(port: number, recipients: readonly string[]): Promise<number[]> {
  let socket: net.Socket | tls.TLSSocket = net.connect({ host: '127.0.0.1', port });
  let buffer = '';
  let waiting: ((code: number) => void) | null = null;
  const codes: number[] = [];
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (line[3] === '-') continue;
      const w = waiting;
      waiting = null;
      w?.(Number(line.slice(0, 3)));
    }
  };
  socket.on('data', onData);
  const reply = () => new Promise<number>((resolve) => (waiting = resolve));
  const say = (line: string) => {
    const next = reply();
    socket.write(`${line}\r\n`);
    return next;
  };
  await new Promise((resolve) => socket.once('connect', resolve));
  await reply();
  await say('EHLO bench.leadgate.test');
  await say('STARTTLS');
  socket.off('data', onData);
  socket = await new Promise<tls.TLSSocket>((resolve) => {
    const secure = tls.connect({ socket: socket as net.Socket, rejectUnauthorized: false }, () => resolve(secure));
  });
  socket.on('data', onData);
  await say('EHLO bench.leadgate.test');
  await say('MAIL FROM:<verify@bench.leadgate.test>');
  for (const r of recipients) codes.push(await say(`RCPT TO:<${r}>`));
  await say('RSET');
  await say('QUIT');
  socket.destroy();
  return codes;
}

function benchNetwork(ports: ServerPorts): NetworkConfig {
  return {
    ...loadConfig({}).network,
    dnsServers: [`127.0.0.1:${ports.dns}`],
    smtpPort: ports.smtp,
    smtpHeloName: 'bench.leadgate.test',
    smtpMailFrom: 'verify@bench.leadgate.test',
    webPorts: { http: ports.web, https: ports.closed },
    outboundAllow: [`127.0.0.1:${ports.smtp}`, `127.0.0.1:${ports.web}`, `127.0.0.1:${ports.closed}`],
  };
}

const throughput = (label: string, items: number, ms: number[]): Throughput => ({
  label,
  perSec: round(items / (median(ms) / 1000), 0),
  ms: round(median(ms), 0),
  rounds: ms.map((m) => round(items / (m / 1000), 0)),
});

export async function benchEmail(options: EmailBenchOptions = EMAIL_BENCH_DEFAULTS): Promise<EmailBenchResult> {
  // The servers get a thread (a core) of their own; the thread loads this file through tsx as well.
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(boot, { eval: true, workerData: { emailBenchServers: options } });
  try {
    const ports = await new Promise<ServerPorts>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const config = benchNetwork(ports);
    const network = createNetwork(config);
    const addresses = Array.from(
      { length: options.addresses },
      (_, k) => `u${Math.floor(k / options.domains)}@${domainName(k % options.domains)}`,
    );
    const byDomain = new Map<string, string[]>();
    for (const a of addresses) byDomain.set(a.split('@')[1]!, [...(byDomain.get(a.split('@')[1]!) ?? []), a]);

    const validator = async () => {
      const checker = new EmailChecker(network, {
        concurrency: config.emailConcurrency,
        greylistRetryMs: config.greylistRetryMs,
      });
      return checker.checkAll(addresses);
    };
    // B: the checker's sessions, said bare: per domain, batches of 20 with one random address, same limits.
    const sameDialogue = async () => {
      const sessions = new KeyedLimiter(config.emailConcurrency);
      const domains = new KeyedLimiter(config.smtpDomainConcurrency);
      const jobs: Promise<number[]>[] = [];
      for (const [domain, list] of byDomain) {
        for (let i = 0; i < list.length; i += 20) {
          const batch = [randomMailbox(domain), ...list.slice(i, i + 20)];
          jobs.push(sessions.run('all', () => domains.run(domain, () => bareSession(ports.smtp, batch))));
        }
      }
      return Promise.all(jobs);
    };
    // C: one session per address, the same number at once.
    const perAddress = () =>
      mapConcurrent(addresses, config.emailConcurrency, (a) =>
        bareSession(ports.smtp, [a, randomMailbox(a.split('@')[1]!)]),
      );

    const statuses: Record<string, number> = {};
    for (const check of await validator()) statuses[check.status] = (statuses[check.status] ?? 0) + 1;
    await sameDialogue();
    await perAddress();
    const smtpVariants = { validator, same: sameDialogue, per: perAddress };
    const ms = await alternate(['validator', 'same', 'per'] as const, options.rounds, (which) =>
      timed(smtpVariants[which]),
    );
    const a = throughput('A validator (DNS + guard + SMTP + rules)', options.addresses, ms.validator);
    const b = throughput('B bare loop, same dialogue', options.addresses, ms.same);
    const c = throughput('C bare loop, one session per address', options.addresses, ms.per);

    // Web: the crawler against bare GETs of the same URLs.
    const sites = Array.from({ length: options.sites }, (_, i) => siteName(i));
    const crawler = async () => {
      const limiter = new KeyedLimiter(config.crawlConcurrency);
      const crawls = await Promise.all(
        sites.map((s) => limiter.run('crawl', () => crawlSite(network.web, s, { userAgent: config.userAgent }))),
      );
      return crawls.reduce((n, c) => n + c.pages.length, 0);
    };
    const urls = sites.flatMap((s) => ['/robots.txt', ...SITE_PAGES].map((p) => `http://${s}:${ports.web}${p}`));
    const bare = () =>
      mapConcurrent(urls, config.crawlConcurrency, (url) => {
        const u = new URL(url);
        return new Promise<number>((resolve, reject) => {
          http
            .get(
              { host: '127.0.0.1', port: u.port, path: u.pathname, headers: { host: u.hostname }, agent: false },
              (res) => {
                res.resume();
                res.on('end', () => resolve(res.statusCode ?? 0));
              },
            )
            .on('error', reject);
        });
      });
    const pages = await crawler();
    const pagesPerSite = pages / options.sites;
    await bare();
    const crawlMs = await alternate(['crawler', 'bare'] as const, options.rounds, (which) =>
      timed(which === 'crawler' ? crawler : bare),
    );
    const crawled = throughput('crawler (robots, guard, extraction)', pages, crawlMs.crawler);
    const fetched = throughput('bare GET loop, same pages + robots.txt', pages, crawlMs.bare);
    return {
      options,
      concurrency: {
        sessions: config.emailConcurrency,
        perDomain: config.smtpDomainConcurrency,
        crawl: config.crawlConcurrency,
      },
      smtp: {
        validator: a,
        sameDialogue: b,
        perAddress: c,
        vsSameDialogue: round(a.perSec / b.perSec, 2),
        vsPerAddress: round(a.perSec / c.perSec, 2),
        statuses,
      },
      crawl: { crawler: crawled, bare: fetched, ratio: round(crawled.perSec / fetched.perSec, 2), pagesPerSite },
    };
  } finally {
    await worker.terminate();
  }
}

const GOAL_CHECKS_PER_SEC = 100;

export const email: Suite<EmailBenchResult> = {
  name: 'email',
  key: 'email',
  run: () => benchEmail(),
  format(result) {
    const { options: o, smtp, crawl, concurrency } = result;
    const w = [46, 10, 9];
    return [
      `6. Network tools: ${o.addresses} addresses over ${o.domains} local domains, ${o.sites} local sites; medians of ${o.rounds} alternated rounds`,
      `   SMTP at the default concurrency (${concurrency.sessions} sessions, ${concurrency.perDomain} per domain); statuses: ${Object.entries(
        smtp.statuses,
      )
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')}`,
      pad(['variant', 'checks/s', 'ms'], w),
      ...[smtp.validator, smtp.sameDialogue, smtp.perAddress].map((t) => pad([t.label, t.perSec, t.ms], w)),
      `   A/B = ${smtp.vsSameDialogue}×   A/C = ${smtp.vsPerAddress}×   (goal A ≥ ${GOAL_CHECKS_PER_SEC}/s: ${verdict(smtp.validator.perSec >= GOAL_CHECKS_PER_SEC)})`,
      `   rounds A: ${smtp.validator.rounds.join(', ')}   B: ${smtp.sameDialogue.rounds.join(', ')}   C: ${smtp.perAddress.rounds.join(', ')} checks/s`,
      `   Crawl at ${concurrency.crawl} sites at once, ${crawl.pagesPerSite} pages per site (+ robots.txt)`,
      pad(['variant', 'pages/s', 'ms'], w),
      ...[crawl.crawler, crawl.bare].map((t) => pad([t.label, t.perSec, t.ms], w)),
      `   crawler/bare = ${crawl.ratio}×   rounds crawler: ${crawl.crawler.rounds.join(', ')}   bare: ${crawl.bare.rounds.join(', ')} pages/s`,
    ].join('\n');
  },
  goals: (r) => ({ checksPerSec: GOAL_CHECKS_PER_SEC, met: r.smtp.validator.perSec >= GOAL_CHECKS_PER_SEC }),
};
