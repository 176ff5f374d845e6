import { AuthError } from './session.ts';

/** A toolset an app may be limited to (src/tools/toolsets.ts). */
export interface ToolsetChoice {
  name: string;
  description: string;
}

/** What the consent page shows: GET /oauth/interaction/:uid/details (src/accounts/oauth/consent.ts). */
export interface PendingAuthorization {
  uid: string;
  client: { id: string; name: string; redirectHost: string; localOnly: boolean };
  toolsets: ToolsetChoice[];
  /** The signed-in user's accounts; absent when signed out. */
  accounts?: { id: string; name: string; role: 'owner' | 'admin' | 'member'; mayConnect: boolean }[];
}

async function call<T>(method: string, path: string, csrfToken: string | undefined, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await res.json().catch(() => null)) as {
    error?: { code: string; message: string; details?: { path: string; message: string }[] };
  } | null;
  if (!res.ok) {
    const error = answer?.error;
    throw new AuthError(
      res.status,
      error?.code ?? 'error',
      error?.message ?? `The server answered ${res.status}.`,
      error?.details ?? [],
    );
  }
  return answer as T;
}

const base = (uid: string) => `/oauth/interaction/${encodeURIComponent(uid)}`;

/** The console's side of an app connecting to the MCP server through OAuth. */
export const oauth = {
  pending: (uid: string, csrfToken: string | undefined) =>
    call<PendingAuthorization>('GET', `${base(uid)}/details`, csrfToken),
  /** Allows the app; answers where the browser goes next (back to the app, through the authorization server). */
  allow: (uid: string, csrfToken: string, input: { accountId: string; toolsets: string[]; readOnly: boolean }) =>
    call<{ returnTo: string }>('POST', `${base(uid)}/confirm`, csrfToken, input),
  deny: (uid: string, csrfToken: string) => call<{ returnTo: string }>('POST', `${base(uid)}/abort`, csrfToken, {}),
};
