import { bool, int, list } from './env.ts';

export interface NetworkConfig {
  /** DNS servers for MX and address lookups, "ip" or "ip:port". Default: the system's resolvers. */
  dnsServers: string[];
  /** Milliseconds one DNS query may take. Default 5,000. */
  dnsTimeoutMs: number;
  /** Port of the mail servers probed. Default 25. */
  smtpPort: number;
  /** Name sent in EHLO. Default: the host of publicUrl. */
  smtpHeloName: string;
  /** Envelope sender of the probes (MAIL FROM). Default verify@<smtpHeloName>. */
  smtpMailFrom: string;
  /** Milliseconds for the connection and for each SMTP reply. Default 10,000. */
  smtpTimeoutMs: number;
  /** Upgrade probes with STARTTLS where the server offers it. Default true. */
  smtpStartTls: boolean;
  /** Milliseconds before an address answered with a temporary (4xx) refusal is tried again, once. Default 60,000. */
  greylistRetryMs: number;
  /** SMTP sessions open at once per mail domain, in one process. Default 2. */
  smtpDomainConcurrency: number;
  /**
   * SMTP sessions one validator or finder run keeps open at once
   * (each asks up to 20 addresses of one domain). Default 50.
   */
  emailConcurrency: number;
  /** Milliseconds one web fetch may take, redirects included. Default 10,000. */
  webTimeoutMs: number;
  /** Bytes of a web response read at most (after decompression). Default 2 MiB. */
  webMaxBytes: number;
  /** Redirects followed per fetch. Default 5. */
  webMaxRedirects: number;
  /** Domains one domain-email-finder run crawls at once. Default 8. */
  crawlConcurrency: number;
  /** User-Agent of the crawler, also the name matched in robots.txt. Default leadgate-crawler/1.0. */
  userAgent: string;
  /** Ports the web is reached on. Default http 80, https 443; tests point them at local servers. */
  webPorts: { http: number; https: number };
  /**
   * Tests only: targets ("ip" or "ip:port") admitted although the guard would refuse them; when set,
   * every other target is refused, so a test cannot reach the outside world. Default empty.
   */
  outboundAllow: string[];
  /**
   * Tests only: PEM certificates trusted for outbound TLS besides the system's, for local https
   * servers (operators use NODE_EXTRA_CA_CERTS). Default empty.
   */
  trustedCa: string[];
}

/**
 * DNS_SERVERS, DNS_TIMEOUT_MS, SMTP_*, EMAIL_CHECK_CONCURRENCY, WEB_*,
 * CRAWL_CONCURRENCY, CRAWLER_USER_AGENT and OUTBOUND_ALLOW.
 */
export function networkConfig(env: NodeJS.ProcessEnv, publicUrl: string): NetworkConfig {
  const helo = env.SMTP_HELO_NAME || new URL(publicUrl).hostname;
  return {
    dnsServers: list(env.DNS_SERVERS),
    dnsTimeoutMs: int(env.DNS_TIMEOUT_MS, 5_000),
    smtpPort: int(env.SMTP_PORT, 25),
    smtpHeloName: helo,
    smtpMailFrom: env.SMTP_MAIL_FROM || `verify@${helo}`,
    smtpTimeoutMs: int(env.SMTP_TIMEOUT_MS, 10_000),
    smtpStartTls: bool(env.SMTP_STARTTLS, true),
    greylistRetryMs: int(env.SMTP_GREYLIST_RETRY_MS, 60_000),
    smtpDomainConcurrency: Math.max(1, int(env.SMTP_DOMAIN_CONCURRENCY, 2)),
    emailConcurrency: Math.max(1, int(env.EMAIL_CHECK_CONCURRENCY, 50)),
    webTimeoutMs: int(env.WEB_TIMEOUT_MS, 10_000),
    webMaxBytes: int(env.WEB_MAX_BYTES, 2 * 1024 * 1024),
    webMaxRedirects: int(env.WEB_MAX_REDIRECTS, 5),
    crawlConcurrency: Math.max(1, int(env.CRAWL_CONCURRENCY, 8)),
    userAgent: env.CRAWLER_USER_AGENT || 'leadgate-crawler/1.0',
    webPorts: { http: int(env.WEB_HTTP_PORT, 80), https: int(env.WEB_HTTPS_PORT, 443) },
    outboundAllow: list(env.OUTBOUND_ALLOW),
    trustedCa: [],
  };
}
