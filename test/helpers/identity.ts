import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import WebSocket from 'ws';
import type { Client } from 'graphql-ws';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { buildApp, type App } from '../../src/app.ts';
import { loopbackConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import type { LooseBody } from './app.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { sourceOf, type Answer as GraphqlAnswer } from './documents.ts';
import { waitFor } from './wait.ts';
import { wsClient } from './ws.ts';

/** One mail the local SMTP server received: envelope recipient and the raw message. */
export interface ReceivedMail {
  to: string;
  raw: string;
}

/** A local SMTP server that keeps every message it accepts. */
export async function startMailServer() {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        for (const rcpt of session.envelope.rcptTo)
          mails.push({ to: rcpt.address, raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    /** The link to `path` in the next mail to `to` (waits for it), decoded from the message's text. */
    async linkTo(to: string, path: string, from = 0): Promise<string> {
      const mail = await waitFor(() => mails.slice(from).find((m) => m.to === to), Boolean, {
        what: `a mail to ${to}`,
      });
      const text = mail!.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      const match = new RegExp(`https?://[^\\s"<>]*${path.replace(/[?]/g, '\\?')}[A-Za-z0-9_-]{43}`).exec(text);
      if (!match) throw new Error(`no ${path} link in the mail:\n${text}`);
      return match[0];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An answer of the gateway to the browser; `T` types its body, by default read as parsed (see `LooseBody`). */
export interface Answer<T = LooseBody> {
  status: number;
  headers: Headers;
  body: T;
}

interface GraphqlOptions {
  csrf?: boolean;
  headers?: Record<string, string>;
}

/** A browser of the console: keeps the session cookie, sends the CSRF token it was given, from the gateway's own origin. */
export class Browser {
  cookie: string | undefined;
  csrfToken: string | undefined;
  constructor(readonly url: string) {}

  async request(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; csrf?: boolean } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { origin: this.url, ...options.headers };
    if (this.cookie) headers.cookie = `lg_session=${this.cookie}`;
    if (options.csrf !== false && this.csrfToken) headers['x-csrf-token'] = this.csrfToken;
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const set = res.headers.getSetCookie().find((c) => c.startsWith('lg_session='));
    if (set) this.cookie = /^lg_session=([^;]*)/.exec(set)![1] || undefined;
    const text = await res.text();
    const body = text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
    if (body && typeof body === 'object' && typeof body.csrfToken === 'string') this.csrfToken = body.csrfToken;
    return { status: res.status, headers: res.headers, body };
  }

  /** Posts a document to /graphql; a typed document's answer has its `data` typed (see documents.ts). */
  graphql<TData, TVariables>(
    document: TypedDocumentNode<TData, TVariables>,
    variables?: NoInfer<TVariables>,
    options?: GraphqlOptions,
  ): Promise<Answer<GraphqlAnswer<TData>>>;
  graphql(query: string, variables?: Record<string, unknown>, options?: GraphqlOptions): Promise<Answer>;
  graphql(document: TypedDocumentNode | string, variables?: unknown, options: GraphqlOptions = {}): Promise<Answer> {
    return this.request('POST', '/graphql', { body: { query: sourceOf(document), variables }, ...options });
  }

  /** A graphql-ws client on this browser's cookie, from `origin` (default the gateway's own), with the CSRF token unless told. */
  socket(options: { origin?: string; csrfToken?: string | null } = {}): Client {
    const headers = { cookie: `lg_session=${this.cookie}`, origin: options.origin ?? this.url };
    class CookieSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers });
      }
    }
    const csrfToken = options.csrfToken === undefined ? this.csrfToken : options.csrfToken;
    return wsClient(this.url, undefined, {
      webSocketImpl: CookieSocket,
      connectionParams: csrfToken === null ? {} : { csrfToken },
    });
  }
}

export interface IdentityApp {
  app: App;
  url: string;
  mail: Awaited<ReturnType<typeof startMailServer>>;
  database: TestDatabase;
  /** Every log line written so far. */
  logs: string[];
  browser(): Browser;
  /** Signs a new user up (open sign-up) and returns their browser; the email stays unverified, the trial credits not granted. */
  signUp(email: string, password?: string): Promise<Browser>;
  /** Signs a new user up and follows the verification link mailed to them, as they would: the account has its trial credits. */
  signUpVerified(email: string, password?: string): Promise<Browser>;
  /** Follows the verification link in the next mail to `email` after mail number `from`: the answer of POST /auth/verify-email. */
  verifyEmail(email: string, from?: number): Promise<Answer>;
  stop(): Promise<void>;
}

/**
 * The gateway with mail through a local SMTP server, cheap password hashing and its log captured.
 * Every test's browser comes from 127.0.0.1, so sign-ups per address are not limited unless a test says so.
 */
export async function startIdentityApp(
  config: Partial<Config> = {},
  options: { worker?: boolean } = {},
): Promise<IdentityApp> {
  const mail = await startMailServer();
  const database = await createTestDatabase();
  const logs: string[] = [];
  const logger = createLogger('debug', { write: (line: string) => void logs.push(line) });
  const app = await buildApp({
    config: loopbackConfig(database.url, 0, {
      authCacheSecs: 0,
      rateLimitPerMinute: 100_000,
      mail: { smtpUrl: mail.url, from: 'leadgate <no-reply@leadgate.test>' },
      passwordCost: { memoryKib: 1024, passes: 1 },
      signupsPerHour: 0,
      ...config,
    }),
    databaseUrl: database.url,
    logger,
    worker: options.worker ?? false,
    workerPollInterval: 200,
  });
  const url = await app.start(0, '127.0.0.1');
  const signUp = async (email: string, password = 'correct horse battery') => {
    const browser = new Browser(url);
    const res = await browser.request('POST', '/auth/sign-up', {
      body: { email, password, name: email.split('@')[0] },
    });
    if (res.status !== 201) throw new Error(`sign-up answered ${res.status}: ${JSON.stringify(res.body)}`);
    return browser;
  };
  const verifyEmail = async (email: string, from = 0) => {
    const link = await mail.linkTo(email.toLowerCase(), '/verify-email?token=', from);
    return new Browser(url).request('POST', '/auth/verify-email', {
      body: { token: new URL(link).searchParams.get('token') },
    });
  };
  return {
    app,
    url,
    mail,
    database,
    logs,
    browser: () => new Browser(url),
    signUp,
    verifyEmail,
    async signUpVerified(email, password) {
      const from = mail.mails.length;
      const browser = await signUp(email, password);
      const verified = await verifyEmail(email, from);
      if (verified.status !== 200)
        throw new Error(`verification answered ${verified.status}: ${JSON.stringify(verified.body)}`);
      return browser;
    },
    async stop() {
      await app.stop();
      await mail.close();
      await database.drop();
    },
  };
}
