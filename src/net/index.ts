import type { NetworkConfig } from '../config.ts';
import type { ContactNetwork, WebResponse } from '../sources/contacts.ts';
import { createDnsLookup } from './dns.ts';
import { createGuard, type OutboundGuard } from './guard.ts';
import { createWebClient, guardedGet, guardedPost, type WebLimits } from './http.ts';
import { createSmtpProber } from './smtp.ts';

export interface Network extends ContactNetwork {
  /** The outbound guard every connection of this network goes through. */
  guard: OutboundGuard;
  /** POST through the guard, redirects not followed (webhook deliveries). */
  post(
    url: string,
    body: string,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<{ status: number; body: string }>;
  /**
   * GET of a small document a caller names (an OAuth client's metadata): through the guard, no
   * redirect followed, within `limits` (the web's otherwise).
   */
  getDocument(url: string, limits: { timeoutMs: number; maxBytes: number }, signal?: AbortSignal): Promise<WebResponse>;
}

/** DNS, SMTP and web clients from the configuration, all behind one outbound guard. */
export function createNetwork(config: NetworkConfig): Network {
  const dns = createDnsLookup({ servers: config.dnsServers, timeoutMs: config.dnsTimeoutMs });
  const guard = createGuard({ dns, webPorts: config.webPorts, allow: config.outboundAllow });
  const limits: WebLimits = {
    timeoutMs: config.webTimeoutMs,
    maxBytes: config.webMaxBytes,
    maxRedirects: config.webMaxRedirects,
    userAgent: config.userAgent,
    trustedCa: config.trustedCa,
  };
  return {
    guard,
    post: (url, body, headers, signal) => guardedPost(guard, url, body, headers, limits, signal),
    getDocument: (url, document, signal) => guardedGet(guard, url, { ...limits, ...document, maxRedirects: 0 }, signal),
    dns,
    smtp: createSmtpProber({
      guard,
      port: config.smtpPort,
      heloName: config.smtpHeloName,
      mailFrom: config.smtpMailFrom,
      timeoutMs: config.smtpTimeoutMs,
      startTls: config.smtpStartTls,
      domainConcurrency: config.smtpDomainConcurrency,
    }),
    web: createWebClient(guard, limits, config.webPorts),
    settings: {
      emailConcurrency: config.emailConcurrency,
      greylistRetryMs: config.greylistRetryMs,
      crawlConcurrency: config.crawlConcurrency,
      userAgent: config.userAgent,
    },
  };
}
