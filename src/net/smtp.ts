import net from 'node:net';
import tls from 'node:tls';
import type { SmtpProbeResult, SmtpProber, SmtpReply, SmtpStage } from '../sources/contacts.ts';
import { NetError } from './errors.ts';
import type { OutboundGuard } from './guard.ts';
import { KeyedLimiter } from './limiter.ts';

export interface SmtpOptions {
  guard: OutboundGuard;
  port: number;
  heloName: string;
  mailFrom: string;
  /** Milliseconds for the connection and for each reply. */
  timeoutMs: number;
  startTls: boolean;
  /** Sessions at once per mail domain, in this process. */
  domainConcurrency: number;
}

/** Mail servers tried per domain, in preference order. */
const MAX_HOSTS = 3;

type Failure = NonNullable<SmtpProbeResult['failure']>;

class SessionFailure extends Error {
  constructor(readonly failure: Failure) {
    super(failure.reason);
  }
}

const ENHANCED = /^([245]\.\d{1,3}\.\d{1,3})\b/;

/** Reads replies (multi-line aware) off a socket; one command at a time. */
class Conversation {
  private buffer = '';
  private lines: string[] = [];
  private replies: SmtpReply[] = [];
  private waiter: { resolve: (r: SmtpReply) => void; reject: (e: Error) => void } | null = null;
  private closedWith: Error | null = null;
  private readonly onData = (chunk: Buffer) => this.receive(chunk.toString('latin1'));
  private readonly onClose = () => this.fail(new NetError('connect', this.host, 'the server closed the connection'));
  private readonly onError = (err: Error) => this.fail(new NetError('connect', this.host, err.message));

  constructor(
    public socket: net.Socket,
    private readonly host: string,
    private readonly timeoutMs: number,
  ) {
    this.attach(socket);
  }

  private attach(socket: net.Socket) {
    socket.on('data', this.onData);
    socket.on('close', this.onClose);
    socket.on('error', this.onError);
  }

  private detach(socket: net.Socket) {
    socket.off('data', this.onData);
    socket.off('close', this.onClose);
    socket.off('error', this.onError);
  }

  private receive(text: string) {
    this.buffer += text;
    for (let end = this.buffer.indexOf('\n'); end >= 0; end = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, end).replace(/\r$/, '');
      this.buffer = this.buffer.slice(end + 1);
      this.lines.push(line);
      if (!/^\d{3}-/.test(line)) {
        const reply = this.parse(this.lines);
        this.lines = [];
        if (this.waiter) {
          const w = this.waiter;
          this.waiter = null;
          w.resolve(reply);
        } else {
          this.replies.push(reply);
        }
      }
    }
    if (this.buffer.length > 64 * 1024) this.fail(new NetError('protocol', this.host, 'reply line too long'));
  }

  private parse(lines: string[]): SmtpReply {
    const code = Number.parseInt((lines[0] ?? '').slice(0, 3), 10);
    const texts = lines.map((l) => l.slice(4));
    const enhanced = ENHANCED.exec(texts.at(-1) ?? '')?.[1] ?? ENHANCED.exec(texts[0] ?? '')?.[1] ?? null;
    return { code: Number.isFinite(code) ? code : 0, enhanced, text: texts.join('\n').trim() };
  }

  private fail(err: Error) {
    if (this.closedWith) return;
    this.closedWith = err;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w.reject(err);
    }
  }

  /** The next reply, within the timeout. */
  read(): Promise<SmtpReply> {
    const queued = this.replies.shift();
    if (queued) return Promise.resolve(queued);
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise<SmtpReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new NetError('timeout', this.host, `no reply within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.waiter = {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  command(line: string): Promise<SmtpReply> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    this.socket.write(`${line}\r\n`);
    return this.read();
  }

  /** Upgrades the connection in place (after a 220 to STARTTLS). */
  async upgrade(servername: string | undefined): Promise<void> {
    const plain = this.socket;
    this.detach(plain);
    const secure = await new Promise<tls.TLSSocket>((resolve, reject) => {
      // Mail servers' certificates rarely match their MX names; the probe needs privacy, not identity.
      const socket = tls.connect({ socket: plain, servername, rejectUnauthorized: false });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new NetError('timeout', this.host, `TLS handshake took over ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      socket.once('secureConnect', () => {
        clearTimeout(timer);
        resolve(socket);
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(new NetError('tls', this.host, `TLS failed: ${err.message}`));
      });
    });
    this.socket = secure;
    this.attach(secure);
  }

  /** Ends the session at once; a pending read fails with `reason`. */
  abort(reason: Error) {
    this.fail(reason);
    this.close();
  }

  close() {
    this.detach(this.socket);
    this.socket.on('error', () => {});
    this.socket.destroy();
  }
}

function connect(
  address: string,
  port: number,
  family: 4 | 6,
  host: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: address, port, family });
    const cleanup = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.off('error', onError);
    };
    const onError = (err: NodeJS.ErrnoException) => {
      cleanup();
      socket.destroy();
      const reason =
        err.code === 'ECONNREFUSED'
          ? 'connection refused'
          : err.code === 'EHOSTUNREACH' || err.code === 'ENETUNREACH'
            ? 'host unreachable'
            : err.message;
      reject(new NetError('connect', host, reason));
    };
    const onAbort = () => {
      cleanup();
      socket.destroy();
      reject(new NetError('aborted', host, 'the run was cancelled'));
    };
    const timer = setTimeout(() => {
      cleanup();
      socket.destroy();
      reject(new NetError('timeout', host, `no connection within ${timeoutMs} ms`));
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('error', onError);
    socket.once('connect', () => {
      cleanup();
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}

const failureOf = (stage: SmtpStage, err: unknown): Failure => {
  if (err instanceof SessionFailure) return err.failure;
  if (err instanceof NetError) {
    const kind = err.kind === 'refused' ? 'refused' : err.kind === 'timeout' ? 'timeout' : 'error';
    return { stage, kind, reason: err.message };
  }
  return { stage, kind: 'error', reason: (err as Error).message };
};

const rejected = (stage: SmtpStage, reply: SmtpReply, what: string) =>
  new SessionFailure({
    stage,
    kind: 'rejected',
    reason: `${what}: ${reply.code} ${reply.text.split('\n')[0]}`.trim(),
    reply,
  });

/** One SMTP session on one host: EHLO, STARTTLS where offered, MAIL FROM, RCPT TO each, RSET, QUIT. */
async function session(
  options: SmtpOptions,
  host: string,
  recipients: readonly string[],
  useTls: boolean,
  signal?: AbortSignal,
): Promise<SmtpProbeResult> {
  const replies: (SmtpReply | null)[] = recipients.map(() => null);
  let stage: SmtpStage = 'connect';
  let tlsUsed = false;
  let talk: Conversation | undefined;
  const onAbort = () => talk?.abort(new NetError('aborted', host, 'the run was cancelled'));
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const target = await options.guard.resolve(host, options.port);
    const socket = await connect(target.address, target.port, target.family, host, options.timeoutMs, signal);
    talk = new Conversation(socket, host, options.timeoutMs);

    stage = 'greeting';
    const greeting = await talk.read();
    if (greeting.code !== 220) throw rejected('greeting', greeting, 'the server refused the session');

    stage = 'ehlo';
    let ehlo = await talk.command(`EHLO ${options.heloName}`);
    if (ehlo.code !== 250) {
      ehlo = await talk.command(`HELO ${options.heloName}`);
      if (ehlo.code !== 250) throw rejected('ehlo', ehlo, 'HELO refused');
    }
    const extensions = ehlo.text.toUpperCase().split('\n');
    if (useTls && extensions.some((e) => e.trim() === 'STARTTLS')) {
      stage = 'starttls';
      const ready = await talk.command('STARTTLS');
      if (ready.code === 220) {
        await talk.upgrade(net.isIP(host) ? undefined : host);
        tlsUsed = true;
        const again = await talk.command(`EHLO ${options.heloName}`);
        if (again.code !== 250) throw rejected('starttls', again, 'EHLO after STARTTLS refused');
      }
    }

    stage = 'mail';
    const mail = await talk.command(`MAIL FROM:<${options.mailFrom}>`);
    if (mail.code !== 250) throw rejected('mail', mail, 'the sender was refused');

    stage = 'rcpt';
    for (const [i, recipient] of recipients.entries()) {
      const reply = await talk.command(`RCPT TO:<${recipient}>`);
      replies[i] = reply;
      if (reply.code === 421) throw rejected('rcpt', reply, 'the server closed the session');
    }
    await talk.command('RSET').catch(() => undefined);
    await talk.command('QUIT').catch(() => undefined);
    return { host, tls: tlsUsed, replies, failure: null };
  } catch (err) {
    return { host, tls: tlsUsed, replies, failure: failureOf(stage, err) };
  } finally {
    signal?.removeEventListener('abort', onAbort);
    talk?.close();
  }
}

// No control characters (no command injection) and no angle brackets; quoted local parts may hold spaces.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it refuses
const SAFE_ADDRESS = /^[^\x00-\x1f\x7f<>]+@[^\s<>\x00-\x1f\x7f]+$/;

/** Probes mailboxes over SMTP; at most `domainConcurrency` sessions per mail domain at once. */
export function createSmtpProber(options: SmtpOptions): SmtpProber {
  const limiter = new KeyedLimiter(options.domainConcurrency);
  return {
    async probe(request, signal) {
      for (const r of request.recipients)
        if (!SAFE_ADDRESS.test(r)) throw new Error(`not a probe-safe address: ${JSON.stringify(r)}`);
      return limiter.run(request.domain.toLowerCase(), async () => {
        let last: SmtpProbeResult = {
          host: null,
          tls: false,
          replies: request.recipients.map(() => null),
          failure: { stage: 'connect', kind: 'error', reason: 'no mail server to try' },
        };
        for (const host of request.hosts.slice(0, MAX_HOSTS)) {
          if (signal?.aborted) break;
          let result = await session(options, host, request.recipients, options.startTls, signal);
          // A server whose TLS is broken is asked again in plain text.
          if (result.failure?.stage === 'starttls' && result.failure.kind !== 'rejected')
            result = await session(options, host, request.recipients, false, signal);
          last = result;
          // Only a server that could not be reached or refused the session sends us to the next one.
          const stage = result.failure?.stage;
          if (stage !== 'connect' && stage !== 'greeting') return result;
        }
        return last;
      });
    },
  };
}
