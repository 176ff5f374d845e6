import { randomBytes } from 'node:crypto';
import { KeyedLimiter } from '../../../net/limiter.ts';
import { fanOutSignal } from '../../../net/signal.ts';
import type { ContactNetwork, SmtpProbeResult, SmtpReply } from '../../../sources/contacts.ts';
import { DnsError } from '../../../net/errors.ts';
import { isDisposableDomain, isFreeWebmailDomain, isRoleAccount } from './flags.ts';
import { providerFromMx } from './providers.ts';
import { parseAddress } from './syntax.ts';
import type { EmailCheckStatus } from '../../../shared/email-status.ts';

/** One of the validator's words (src/shared/email-status.ts, where the lead database's are mapped to them). */
export type EmailStatus = EmailCheckStatus;

/** What is known about one address after the checks. */
export interface EmailCheck {
  /** The address as sent. */
  input: string;
  /** Normalised address (domain in lower case, IDN in punycode); the input when unreadable. */
  email: string;
  status: EmailStatus;
  reason: string;
  domain: string | null;
  syntaxValid: boolean;
  disposable: boolean;
  role: boolean;
  freeWebmail: boolean;
  /** The domain publishes MX records. */
  mxFound: boolean;
  /** No MX: the domain's own A/AAAA address is its mail server (RFC 5321 §5.1). */
  mxFallback: boolean;
  mxHost: string | null;
  provider: string | null;
  /** The mail server's reply to RCPT TO for this address. */
  smtpCode: number | null;
  smtpReply: string | null;
  /** The session was encrypted with STARTTLS. */
  tls: boolean | null;
}

/** How a domain receives mail, looked up once per run. */
export type DomainMail =
  | { kind: 'hosts'; hosts: [string, ...string[]]; fallback: boolean; provider: string | null }
  | { kind: 'none'; reason: string; mxFound: boolean }
  | { kind: 'failed'; reason: string };

export interface CheckerOptions {
  /** SMTP sessions this checker holds open at once. */
  concurrency: number;
  /** Milliseconds before addresses answered 4xx are tried again, once. */
  greylistRetryMs: number;
  /** Addresses asked in one session (one domain). Default 20. */
  perSession?: number;
  signal?: AbortSignal;
}

const DEFAULT_PER_SESSION = 20;

/** An address at `domain` nobody has: accepted only by a catch-all server. */
export const randomMailbox = (domain: string) => `lg-${randomBytes(8).toString('hex')}@${domain}`;

const firstLine = (reply: SmtpReply) => `${reply.code} ${reply.text.split('\n')[0]}`.trim();
const isTemporary = (reply: SmtpReply | null) => reply !== null && reply.code >= 400 && reply.code < 500;

/** RCPT verdict for a real address, before the catch-all check. */
function rcptVerdict(reply: SmtpReply): { status: EmailStatus; reason: string } {
  const enhanced = reply.enhanced ?? '';
  if (reply.code === 250 || reply.code === 251)
    return { status: 'valid', reason: `the mail server accepts this address (${firstLine(reply)})` };
  if (reply.code === 552 || enhanced === '5.2.2')
    return { status: 'valid', reason: `the mailbox exists but is full (${firstLine(reply)})` };
  if ([550, 551, 553].includes(reply.code) || enhanced.startsWith('5.1.'))
    return { status: 'invalid', reason: `the mailbox does not exist (${firstLine(reply)})` };
  if (reply.code >= 500)
    return { status: 'unknown', reason: `the mail server refused the check for policy reasons (${firstLine(reply)})` };
  if (reply.code >= 400)
    return { status: 'unknown', reason: `temporarily refused twice, e.g. greylisting (${firstLine(reply)})` };
  return { status: 'unknown', reason: `unexpected reply (${firstLine(reply)})` };
}

/** What a session learns about one address. */
type Outcome = Pick<EmailCheck, 'status' | 'reason'> &
  Partial<Pick<EmailCheck, 'smtpCode' | 'smtpReply' | 'tls' | 'mxHost'>>;

interface Pending {
  address: string;
  resolve: (outcome: Outcome) => void;
}

/**
 * Checks addresses like a careful mail client would, without sending anything: syntax, flags, the
 * domain's mail servers (MX, else its A/AAAA record), then one SMTP session per batch of addresses of
 * a domain — RCPT TO each, plus RCPT TO a random address to spot catch-all domains — never DATA.
 * Addresses refused temporarily (4xx, greylisting) are asked again once, later. One checker serves
 * one run: domain lookups and catch-all verdicts are cached for its lifetime.
 */
export class EmailChecker {
  private readonly mail = new Map<string, Promise<DomainMail>>();
  private readonly catchAll = new Map<string, boolean>();
  /** One random address per domain, so a greylisting server recognises it when asked again. */
  private readonly decoys = new Map<string, string>();
  private readonly checks = new Map<string, Promise<EmailCheck>>();
  /** Addresses waiting for a session, by domain. */
  private readonly queued = new Map<string, Pending[]>();
  private readonly sessions: KeyedLimiter;
  /** DNS questions under way at once, so a long list of domains does not flood the resolver. */
  private readonly lookups = new KeyedLimiter(32);
  private readonly perSession: number;
  private readonly signal: AbortSignal;

  constructor(
    private readonly network: Pick<ContactNetwork, 'dns' | 'smtp'>,
    private readonly options: CheckerOptions,
  ) {
    this.sessions = new KeyedLimiter(Math.max(1, options.concurrency));
    this.perSession = options.perSession ?? DEFAULT_PER_SESSION;
    this.signal = fanOutSignal(options.signal);
  }

  /** The domain's mail servers, looked up once per checker. */
  domainMail(domain: string): Promise<DomainMail> {
    let found = this.mail.get(domain);
    if (!found) {
      found = this.lookups.run('dns', () => this.lookUpMail(domain));
      this.mail.set(domain, found);
    }
    return found;
  }

  private async lookUpMail(domain: string): Promise<DomainMail> {
    try {
      const records = await this.network.dns.mx(domain);
      const [first, ...others] = records.map((r) => r.exchange).filter(Boolean);
      if (first === undefined)
        return { kind: 'none', mxFound: true, reason: 'the domain accepts no mail (null MX record)' };
      const hosts: [string, ...string[]] = [first, ...others];
      return { kind: 'hosts', hosts, fallback: false, provider: providerFromMx(hosts, domain) };
    } catch (err) {
      if (!(err instanceof DnsError)) throw err;
      if (err.kind === 'notfound')
        return { kind: 'none', mxFound: false, reason: 'the domain does not exist (NXDOMAIN)' };
      if (err.kind === 'failure') return { kind: 'failed', reason: `MX lookup failed: ${err.message}` };
    }
    // No MX records: the domain's own address receives its mail, if it has one.
    try {
      await this.network.dns.addresses(domain);
      return { kind: 'hosts', hosts: [domain], fallback: true, provider: null };
    } catch (err) {
      if (!(err instanceof DnsError)) throw err;
      if (err.kind === 'failure') return { kind: 'failed', reason: `address lookup failed: ${err.message}` };
      return { kind: 'none', mxFound: false, reason: 'no MX and no A/AAAA record: the domain cannot receive mail' };
    }
  }

  /** Checks one address (the same address twice in a run is checked once). */
  check(input: string): Promise<EmailCheck> {
    const parsed = parseAddress(input);
    const key = parsed.ok ? parsed.address : `\u0000${input}`;
    let found = this.checks.get(key);
    if (!found) {
      found = this.checkFresh(input);
      this.checks.set(key, found);
    }
    return found.then((c) => (c.input === input ? c : { ...c, input }));
  }

  /** Checks every address; results in the order given. */
  checkAll(inputs: readonly string[]): Promise<EmailCheck[]> {
    return Promise.all(inputs.map((i) => this.check(i)));
  }

  private base(input: string): EmailCheck {
    return {
      input,
      email: input.trim(),
      status: 'unknown',
      reason: '',
      domain: null,
      syntaxValid: false,
      disposable: false,
      role: false,
      freeWebmail: false,
      mxFound: false,
      mxFallback: false,
      mxHost: null,
      provider: null,
      smtpCode: null,
      smtpReply: null,
      tls: null,
    };
  }

  private async checkFresh(input: string): Promise<EmailCheck> {
    const parsed = parseAddress(input);
    const check = this.base(input);
    if (!parsed.ok) return { ...check, status: 'invalid', reason: parsed.reason };
    const flagged: EmailCheck = {
      ...check,
      email: parsed.address,
      domain: parsed.domain,
      syntaxValid: true,
      disposable: isDisposableDomain(parsed.domain),
      role: isRoleAccount(parsed.local),
      freeWebmail: isFreeWebmailDomain(parsed.domain),
    };
    const mail = await this.domainMail(parsed.domain);
    if (mail.kind === 'none') return { ...flagged, status: 'invalid', mxFound: mail.mxFound, reason: mail.reason };
    if (mail.kind === 'failed') return { ...flagged, status: 'unknown', reason: mail.reason };
    const withMx: EmailCheck = {
      ...flagged,
      mxFound: !mail.fallback,
      mxFallback: mail.fallback,
      mxHost: mail.hosts[0],
      provider: mail.provider,
    };
    const outcome = await new Promise<Outcome>((resolve) => {
      const list = this.queued.get(parsed.domain) ?? [];
      list.push({ address: parsed.address, resolve });
      this.queued.set(parsed.domain, list);
      // Addresses of one domain queued in the same tick share sessions.
      if (list.length === 1) queueMicrotask(() => this.flush());
    });
    return { ...withMx, ...outcome };
  }

  /** Starts sessions for the addresses queued so far, up to `perSession` per session. */
  private flush() {
    for (const [domain, pending] of this.queued) {
      this.queued.delete(domain);
      for (let i = 0; i < pending.length; i += this.perSession) {
        const batch = pending.slice(i, i + this.perSession);
        this.startSession(domain, batch, false);
      }
    }
  }

  private startSession(domain: string, batch: Pending[], retry: boolean) {
    void this.sessions
      .run('sessions', () => this.probe(domain, batch, retry))
      .catch((err: unknown) => {
        for (const p of batch) p.resolve({ status: 'unknown', reason: `internal error: ${(err as Error).message}` });
      });
  }

  private async probe(domain: string, batch: Pending[], retry: boolean): Promise<void> {
    const mail = await this.domainMail(domain);
    if (mail.kind !== 'hosts' || this.signal.aborted) {
      for (const p of batch)
        p.resolve({
          status: 'unknown',
          reason: mail.kind === 'hosts' ? 'not checked: the run was stopped' : mail.reason,
        });
      return;
    }
    const knownCatchAll = this.catchAll.get(domain);
    let decoy: string | null = null;
    if (knownCatchAll === undefined) {
      decoy = this.decoys.get(domain) ?? randomMailbox(domain);
      this.decoys.set(domain, decoy);
    }
    const recipients = decoy ? [decoy, ...batch.map((p) => p.address)] : batch.map((p) => p.address);
    const result: SmtpProbeResult = await this.network.smtp.probe(
      { domain, hosts: mail.hosts, recipients },
      this.signal,
    );
    const replies = decoy ? result.replies.slice(1) : result.replies;
    const decoyReply = decoy ? (result.replies[0] ?? null) : null;

    let catchAll = knownCatchAll ?? null;
    if (decoyReply && !isTemporary(decoyReply)) {
      catchAll = decoyReply.code === 250 || decoyReply.code === 251;
      this.catchAll.set(domain, catchAll);
    }
    const session = { mxHost: result.host ?? mail.hosts[0], tls: result.host ? result.tls : null };

    const again: Pending[] = [];
    for (const [i, p] of batch.entries()) {
      const reply = replies[i] ?? null;
      if (!reply) {
        const failure = result.failure;
        const temporary = failure?.reply && isTemporary(failure.reply);
        if (temporary && !retry) {
          again.push(p);
          continue;
        }
        const reason = !failure
          ? 'no reply from the mail server'
          : failure.kind === 'refused'
            ? `the mail server may not be contacted: ${failure.reason}`
            : failure.kind === 'timeout'
              ? `the mail server timed out (${failure.stage}): ${failure.reason}`
              : failure.stage === 'connect'
                ? `could not reach the mail server: ${failure.reason}`
                : `the mail server ended the check at ${failure.stage}: ${failure.reason}`;
        p.resolve({ status: 'unknown', reason, ...session });
        continue;
      }
      if (isTemporary(reply) && !retry) {
        again.push(p);
        continue;
      }
      let verdict = rcptVerdict(reply);
      if (verdict.status === 'valid' && catchAll === true) {
        verdict = {
          status: 'catch-all',
          reason: `the domain accepts any address, so this one cannot be confirmed (${firstLine(reply)})`,
        };
      } else if (verdict.status === 'valid' && catchAll === null) {
        verdict = { status: 'valid', reason: `${verdict.reason}; the catch-all check was inconclusive` };
      }
      p.resolve({
        ...session,
        status: verdict.status,
        reason: verdict.reason,
        smtpCode: reply.code,
        smtpReply: firstLine(reply),
      });
    }
    // Greylisting: the same question later usually gets an answer. No session slot is held while waiting.
    if (again.length > 0)
      void sleep(this.options.greylistRetryMs, this.signal).then(() => this.startSession(domain, again, true));
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
