/**
 * Where the contact tools (email validator, email finder, domain email finder) read: what the lead
 * database knows about companies and their people, and the outside world — DNS, mail servers and
 * websites — reached only through the outbound guard. Tests point the network at local servers.
 */

/** A company of the lead database, as the contact tools report it. */
export interface CompanyProfile {
  domain: string;
  name: string;
  industry: string | null;
  sizeBand: string | null;
  employeesCount: number | null;
  founded: number | null;
  city: string | null;
  state: string | null;
  country: string | null;
  linkedinUrl: string | null;
  twitterUrl: string | null;
  facebookUrl: string | null;
}

/** A person of the lead database at a company's domain. */
export interface DomainPerson {
  firstName: string;
  lastName: string;
  title: string | null;
  email: string | null;
  /** verified, guessed or unavailable. */
  emailStatus: string | null;
  linkedinUrl: string | null;
}

export interface ContactCatalog {
  /** Companies by root domain (lower case); domains without a company are absent. */
  companiesByDomain(domains: readonly string[]): Promise<Map<string, CompanyProfile>>;
  /**
   * Companies by name, keyed by the name as given: an exact match ignoring case first, else the most
   * similar name (trigram similarity at least 0.5); names without a company are absent.
   */
  companiesByName(names: readonly string[]): Promise<Map<string, CompanyProfile>>;
  /** People with an email at each domain (verified emails first), at most `perDomain` each. */
  peopleWithEmails(domains: readonly string[], perDomain: number): Promise<Map<string, DomainPerson[]>>;
  /** People at a domain, with or without an email, in id order, at most `limit`. */
  peopleAtDomain(domain: string, limit: number): Promise<DomainPerson[]>;
}

export interface MxRecord {
  exchange: string;
  priority: number;
}

/** DNS lookups; an answer that is not a record set throws `DnsError` (src/net/errors.ts). */
export interface DnsLookup {
  /** MX records of a domain, lowest priority first; a null MX (RFC 7505) is one record with exchange "". */
  mx(domain: string): Promise<MxRecord[]>;
  /** A and AAAA addresses of a host. */
  addresses(host: string): Promise<string[]>;
}

/** One reply of a mail server. */
export interface SmtpReply {
  code: number;
  /** Enhanced status code (RFC 3463), e.g. "5.1.1", when given. */
  enhanced: string | null;
  text: string;
}

export type SmtpStage = 'connect' | 'greeting' | 'ehlo' | 'starttls' | 'mail' | 'rcpt';

export interface SmtpProbeRequest {
  /** The mail domain (per-domain concurrency is counted on it). */
  domain: string;
  /** Mail server host names in preference order; the next is tried when one cannot be reached. */
  hosts: readonly string[];
  /** RCPT TO each, in order, in one session; never DATA. */
  recipients: readonly string[];
}

export interface SmtpProbeResult {
  /** Host that answered (or the last one tried). */
  host: string | null;
  tls: boolean;
  /** Reply to each recipient, in order; null where the session ended first. */
  replies: (SmtpReply | null)[];
  /** Why the session ended early, if it did. */
  failure: {
    stage: SmtpStage;
    kind: 'refused' | 'timeout' | 'error' | 'rejected';
    reason: string;
    reply?: SmtpReply;
  } | null;
}

export interface SmtpProber {
  probe(request: SmtpProbeRequest, signal?: AbortSignal): Promise<SmtpProbeResult>;
}

export interface WebResponse {
  /** Final URL after redirects. */
  url: string;
  status: number;
  contentType: string;
  body: string;
  /** The body was cut at the size limit. */
  truncated: boolean;
}

export interface WebClient {
  /** The site root of a domain on the given scheme (the configured web port). */
  siteUrl(domain: string, scheme: 'https' | 'http'): URL;
  /** GET through the outbound guard, following redirects (each hop checked); throws NetError. */
  get(url: string | URL, signal?: AbortSignal): Promise<WebResponse>;
}

/** Tuning of the contact tools. */
export interface ContactSettings {
  /** SMTP sessions one run keeps open at once. */
  emailConcurrency: number;
  /** Milliseconds before a greylisted address is tried again, once. */
  greylistRetryMs: number;
  /** Domains one run crawls at once. */
  crawlConcurrency: number;
  /** User-Agent of the crawler, matched in robots.txt. */
  userAgent: string;
}

export interface ContactNetwork {
  dns: DnsLookup;
  smtp: SmtpProber;
  web: WebClient;
  settings: ContactSettings;
}

export interface ContactSource extends ContactNetwork {
  catalog: ContactCatalog;
}
