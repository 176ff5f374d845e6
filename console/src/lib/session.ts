/** The session of the signed-in user, as GET /auth/session and the sign-in routes answer it (docs/console.md). */
export interface SessionView {
  user: { id: string; email: string; name: string | null; emailVerified: boolean };
  account: { id: string; name: string };
  role: 'owner' | 'admin' | 'member';
  /** What the role may do; the pages shown follow it. */
  permissions: ('billing' | 'webhooks' | 'keys' | 'members' | 'connections' | 'suppressions' | 'audit')[];
  /** The roles the user may give, fewest rights first; they may change or remove the members holding one of them. */
  assignableRoles: SessionView['role'][];
  csrfToken: string;
  expiresAt: string;
  /** USD of trial credits verifying the email adds to the wallet ("5.00"); null when none await. */
  trialCredits: string | null;
}

/** What following an email verification link answers. */
export interface EmailVerified {
  email: string;
  alreadyVerified: boolean;
  trial: 'granted' | 'claimed' | 'throwaway' | 'none';
  trialCredits: string | null;
  message: string;
}

/** A refusal of an /auth route: DESIGN.md's error body. */
export class AuthError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }

  /** The message of the field at `path`, if the refusal names it. */
  fieldMessage(path: string): string | undefined {
    return this.details.find((d) => d.path === path)?.message;
  }
}

/** What the console says of a refusal that came without an explanation (a proxy's error page, an outage). */
const unexplained = (status: number) =>
  status >= 500
    ? 'leadgate could not answer just now. Try again in a moment.'
    : 'leadgate refused this request without saying why. Reload the page and try again.';

/** A JSON request of the console to the gateway's own routes, a refusal thrown as an AuthError. */
export async function call<T>(method: string, path: string, body?: unknown, csrfToken?: string): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return undefined as T;
  const answer = (await res.json().catch(() => null)) as {
    error?: { code: string; message: string; details?: { path: string; message: string }[] };
  } | null;
  if (!res.ok) {
    const error = answer?.error;
    throw new AuthError(
      res.status,
      error?.code ?? 'error',
      error?.message ?? unexplained(res.status),
      error?.details ?? [],
    );
  }
  return answer as T;
}

export const auth = {
  /** The current session; null when signed out. */
  async current(): Promise<SessionView | null> {
    try {
      return await call<SessionView>('GET', '/auth/session');
    } catch (err) {
      if (err instanceof AuthError && err.status === 401) return null;
      throw err;
    }
  },
  signUp: (input: { email: string; password: string; name?: string; accountName?: string }) =>
    call<SessionView>('POST', '/auth/sign-up', input),
  signIn: (input: { email: string; password: string }) => call<SessionView>('POST', '/auth/sign-in', input),
  signOut: (csrfToken: string) => call<void>('POST', '/auth/sign-out', undefined, csrfToken),
  requestReset: (email: string) => call<void>('POST', '/auth/password-reset', { email }),
  confirmReset: (input: { token: string; password: string }) =>
    call<SessionView>('POST', '/auth/password-reset/confirm', input),
  verifyEmail: (token: string) => call<EmailVerified>('POST', '/auth/verify-email', { token }),
  resendVerification: (csrfToken: string) =>
    call<{ message: string }>('POST', '/auth/verify-email/resend', undefined, csrfToken),
  invitation: (token: string) =>
    call<{ email: string; accountName: string; role: string; expiresAt: string; userExists: boolean }>(
      'GET',
      `/auth/invitations/${encodeURIComponent(token)}`,
    ),
  acceptInvitation: (input: { token: string; password: string; name?: string }) =>
    call<SessionView>('POST', '/auth/invitations/accept', input),
};
